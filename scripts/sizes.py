"""Byte sizes spelled as ccbench spells them (core/size.h), the one Python place for it: format_size
"64K" (the form -b/-e read back), human_size "64 KiB" (for people). Binary units: K = 1024.
tests/sizes_check.py holds both to ccbench's own output (tests/golden/size_spellings.txt)."""

SUFFIXES = ("", "K", "M", "G", "T")
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_size(n):
    """"64K", "1G" where exact, else plain bytes ("1000")."""
    i = 0
    while i + 1 < len(SUFFIXES) and n >= 1024 and n % 1024 == 0:
        n //= 1024
        i += 1
    return f"{n}{SUFFIXES[i]}"


def human_size(n):
    """"8 B", "1 KiB", "1.50 MiB": the largest unit the size reaches, two decimals when not exact."""
    u, scale = 0, 1
    while u + 1 < len(UNITS) and n // scale >= 1024:
        scale *= 1024
        u += 1
    if n % scale == 0:
        return f"{n // scale} {UNITS[u]}"
    # As core/size.cpp: both converted to double, then divided.
    return f"{float(n) / float(scale):.2f} {UNITS[u]}"
