# Pools rounds.csv.xz (every round of every launch of campaign.sh): per mode and size, the median,
# quartiles and spread of ofi / ours over the pairs of one round (the two sides run next to each
# other), and best over best. Usage: python3 pool.py [rounds.csv.xz]
import csv, lzma, statistics, sys
rows = list(csv.DictReader(lzma.open(sys.argv[1] if len(sys.argv) > 1 else "rounds.csv.xz", "rt")))
for table in ["allreduce", "channels", "channels_bare"]:
    print(f"== {table}: paired ofi/ours, every round of every launch (median, quartiles, spread, n); best over best")
    for mode in ["default", "rmem"]:
        for size in [1 << 20, 4 << 20, 16 << 20]:
            sel = [r for r in rows if r["table"] == table and r["mode"] == mode and int(r["bytes"]) == size]
            ours = [float(r["ours_GBps"]) for r in sel]
            ofi = [float(r["ofi_GBps"]) for r in sel]
            pairs = [b / a for a, b in zip(ours, ofi) if a > 0]
            q = statistics.quantiles(pairs, n=4)
            print(f"  {mode:8} {size>>20:>2} MiB  median {statistics.median(pairs):.2f}  quartiles {q[0]:.2f}..{q[2]:.2f}"
                  f"  spread {min(pairs):.2f}..{max(pairs):.2f}  n {len(pairs)}   best {max(ofi)/max(ours):.2f}"
                  f" (ours {max(ours):.2f}, ofi {max(ofi):.2f} GB/s)")
