#pragma once
// Text formatting shared by the writers and the comparisons.
#include <cstdint>
#include <string>
#include <vector>

#include "results/record.h"

namespace ccbench {

// `s` on one line: CR, LF and tab become spaces, so a reason cannot break a table row.
std::string single_line(const std::string& s);

// An argument as a POSIX shell reads it back, so that a recorded command line can be pasted and
// runs nothing it did not: as is when it holds only characters no shell treats specially, else in
// single quotes ('it'\''s'), and as $'...' with \n, \t, \r, \xHH escapes when it holds a
// control character (a newline would otherwise end the line that records it).
std::string shell_quoted(const std::string& arg);
// A path on a line of output: as is when every character is printable, else shell_quoted(), so
// that a newline in a folder name cannot break the line or forge another.
std::string path_on_one_line(const std::string& path);

// The wrong count as the table and Markdown print it: the number, or N/A when not checked.
std::string wrong_text(const RunRecord& r);

// The case a row belongs to in the table and Markdown writers: every field but the size and
// the placement (in-place or not). Two rows with equal keys go in the same table.
std::string case_key(const RunRecord& r);
// The same case for people: "allreduce  impl ring  transport shm  device cpu  ranks 4 (2 per
// node)  dtype float  op sum  mode eager", plus root and group where they are not the default.
std::string case_title(const RunRecord& r);
// The same case in a phrase, for headings and footers: "allreduce/ring over shm, cpu, float sum,
// eager, 4 ranks (2 per node)".
std::string case_label(const RunRecord& r);

// "in-place" or "out-of-place".
std::string placement(const RunRecord& r);

// Text columns, right-aligned (with `left_last`, the last one, free text, left-aligned): header
// rows start with "# ", data rows with `data_prefix` (as wide), so that the columns line up
// under their names. Trailing spaces are trimmed.
std::string aligned_columns(const std::vector<std::vector<std::string>>& header,
                            const std::vector<std::vector<std::string>>& data, const char* data_prefix, bool left_last);

}  // namespace ccbench
