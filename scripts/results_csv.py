"""A ccbench results.csv read by the Python tools (scripts/report.py, scripts/plot.py), with the
value checks the C++ readers make (results/row_check.h): a row whose figures are not finite
numbers of zero or more, whose iteration times are out of order, or whose bandwidth is above
what its own size and time allow (busbw <= 2 x size / time: no collective's bus factor reaches 2)
is damaged, and the file is refused naming each such row's line.

read(path) returns the rows (dicts keyed by the CSV header, plus "_line": the row's line in the
file) and the file's '#' lines; anything that is not a ccbench results.csv with sound rows raises
BadInput with a message for people, which the tools print before exiting 2.
"""
import csv
import io
import math

NEEDED = {"collective", "impl", "transport", "size[B]", "busbw[GB/s]", "time_median[us]", "status"}
FIGURES = ["time_avg[us]", "time_median[us]", "time_min[us]", "time_p95[us]", "time_max[us]", "time_cv",
           "algbw[GB/s]", "busbw[GB/s]", "busbw_median[GB/s]"]
TIME_ORDER = ["time_min[us]", "time_median[us]", "time_p95[us]", "time_max[us]"]
MAX_BUS_FACTOR = 2.0    # all-reduce's 2(n-1)/n is the largest bus factor, below 2 (results/row_check.h)
ROUNDING_SLACK = 0.01   # rounding of figures printed with as few as 2-3 digits (results/row_check.h)
DAMAGED_LISTED = 5      # damaged rows named in the message; the rest are counted
STATUSES = ("ok", "wrong", "skipped", "failed")  # a row's status (results/record.h RowStatus)
# The schema versions of results.csv these tools read (results/record.h kOldestSchemaVersion to
# kSchemaVersion); a '# ... schema_version N' line naming another is refused.
SCHEMA_VERSIONS = range(1, 5)


class BadInput(Exception):
    """A file that is not a ccbench results.csv with sound rows; str() says what and where."""


def _text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    if b"\0" in data:
        raise BadInput(f"{path}: not a ccbench results.csv: a binary file (it holds NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not a ccbench results.csv: not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x})")


def _number(row, column):
    try:
        return float(row.get(column) or "")
    except ValueError:
        return None


def damage(row):
    """'' for a sound row, else what is impossible in it ('busbw[GB/s] is nan; ...')."""
    problems = []
    if row.get("status") not in STATUSES:  # an empty or unknown status says nothing of the row
        problems.append(f"status '{row.get('status')}' is not one of {', '.join(STATUSES)}")
    values = {}
    for c in FIGURES:
        if c not in row:
            continue
        v = _number(row, c)
        if v is None:
            problems.append(f"{c} '{row[c]}' is not a number")
        elif not math.isfinite(v) or v < 0:
            problems.append(f"{c} is {row[c]}")
        else:
            values[c] = v
    try:
        size = int(row.get("size[B]", ""))
        if size < 0:
            raise ValueError
    except ValueError:
        problems.append(f"size[B] '{row.get('size[B]')}' is not a size")
        size = None
    if problems or row.get("status") not in ("ok", "wrong") or size is None:
        return "; ".join(problems)
    times = [values.get(c) for c in TIME_ORDER]
    for lo, hi, a, b in zip(times, times[1:], TIME_ORDER, TIME_ORDER[1:]):
        if lo is not None and hi is not None and lo > hi * (1 + ROUNDING_SLACK):
            problems.append(f"{a} {lo:g} is above {b} {hi:g}")
    for bw, time, factor in (("algbw[GB/s]", "time_avg[us]", 1.0), ("busbw[GB/s]", "time_avg[us]", MAX_BUS_FACTOR),
                             ("busbw_median[GB/s]", "time_median[us]", MAX_BUS_FACTOR)):
        if bw in values and time in values:
            bound = factor * size / (values[time] * 1e3) if values[time] > 0 else 0.0
            if values[bw] > bound * (1 + ROUNDING_SLACK):
                problems.append(f"{bw} {values[bw]:g} is above {bound:g}, the most that size[B] {size} in "
                                f"{time} {values[time]:g} allows")
    return "; ".join(problems)


def _check_schema(path, comments):
    """Raises BadInput when a '#' line states a schema_version these tools do not read."""
    for line in comments:
        if "schema_version " not in line:
            continue
        text = line.split("schema_version ", 1)[1].strip()
        if not text.isdigit() or int(text) not in SCHEMA_VERSIONS:
            raise BadInput(f"{path}: schema_version {text} is not one these tools read (they read "
                           f"{SCHEMA_VERSIONS.start} to {SCHEMA_VERSIONS.stop - 1}); read it with the ccbench that wrote it")


def read(path):
    """(rows, comment lines) of a results.csv; raises BadInput."""
    kept, line_of, comments = [], [], []
    for number, line in enumerate(_text(path).splitlines(keepends=True), 1):
        if line.startswith("#"):
            comments.append(line)
        elif line.strip():
            kept.append(line)
            line_of.append(number)
    if not kept:
        raise BadInput(f"{path}: not a ccbench results.csv: no header and no rows (an empty file, or comments only)")
    _check_schema(path, comments)
    reader = csv.DictReader(io.StringIO("".join(kept)))
    rows = []
    try:
        for row in reader:
            where = f"{path}:{line_of[reader.line_num - 1]}"
            if None in row or None in row.values():
                more = "more" if None in row else "fewer"
                raise BadInput(f"{where}: the row has {more} fields than the header ({len(reader.fieldnames)})")
            row["_line"] = line_of[reader.line_num - 1]
            rows.append(row)
    except csv.Error as e:
        raise BadInput(f"{path}:{line_of[min(reader.line_num, len(line_of)) - 1]}: malformed CSV ({e})")
    absent = sorted(NEEDED - set(reader.fieldnames or []))
    if absent:
        raise BadInput(f"{path}: not a ccbench results.csv: its header has no column {', '.join(absent)}")
    if not rows:
        raise BadInput(f"{path}: a results.csv without rows (the run measured nothing): nothing to report")
    damaged = [f"{path}:{r['_line']}: {d}" for r in rows for d in [damage(r)] if d]
    if damaged:
        listed = "\n  ".join(damaged[:DAMAGED_LISTED])
        more = f"\n  ... and {len(damaged) - DAMAGED_LISTED} more" if len(damaged) > DAMAGED_LISTED else ""
        raise BadInput(f"{path}: {len(damaged)} of {len(rows)} rows have impossible values; nothing drawn:\n  "
                       f"{listed}{more}")
    return rows, comments
