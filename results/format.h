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

// A row's case (results/row_key.h: case_key) for people: "allreduce  impl ring  transport shm
// device cpu  ranks 4 (2 per node)  dtype float  op sum  mode eager", plus root and group where
// they are not the default.
std::string case_title(const RunRecord& r);
// The same case in a phrase, for headings and footers: "allreduce/ring over shm, cpu, float sum,
// eager, 4 ranks (2 per node)".
std::string case_label(const RunRecord& r);

// "in-place" or "out-of-place".
std::string placement(const RunRecord& r);
// The case and placement, as compare's flagged lines name a row's case: case_title, placement.
std::string row_title(const RunRecord& r);
// A row as compare's and accept's lines name it: row_title, the size and, with `name_cycle`
// (rows of a repeated run, -N), the cycle.
std::string row_label(const RunRecord& r, bool name_cycle = false);

// A case in a few words, for messages and lists: "allreduce/ring float sum" (the op "none" of a
// collective that reduces nothing left out).
std::string case_words(const std::string& collective, const std::string& impl, const std::string& dtype,
                       const std::string& op);
// A row in a few words: case_words, size, placement, the mode where not eager and, with
// `with_group`, the group where not world: "allreduce/ring float sum 64K in-place".
std::string row_words(const RunRecord& r, bool with_group = true);

// Text columns, right-aligned (with `left_last`, the last one, free text, left-aligned): header
// rows start with "# ", data rows with `data_prefix` (as wide), so that the columns line up
// under their names. Trailing spaces are trimmed.
std::string aligned_columns(const std::vector<std::vector<std::string>>& header,
                            const std::vector<std::vector<std::string>>& data, const char* data_prefix, bool left_last);

}  // namespace ccbench
