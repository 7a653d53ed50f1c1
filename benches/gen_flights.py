"""Seeded generator of a flights-like CSV (the shape of the airline on-time
exports: 19 columns of small integers, floats, two- and three-letter codes,
``NA`` for missing values and timestamps), for the Python benchmarks.

    python3 benches/gen_flights.py OUT SIZE [SEED]
    python3 benches/gen_flights.py /tmp/flights-100m.csv 100M 42

SIZE takes the suffixes K, M, G (binary). Rows are written whole until the
file reaches SIZE. The same SEED always gives the same bytes.
"""

import random
import sys

HEADER = (
    "Year,Month,DayofMonth,DayOfWeek,DepTime,CRSDepTime,ArrTime,CRSArrTime,"
    "UniqueCarrier,FlightNum,TailNum,ActualElapsedTime,ArrDelay,DepDelay,"
    "Origin,Dest,Distance,Cancelled,ScheduledAt"
)
CARRIERS = ["AA", "UA", "DL", "WN", "US", "NW", "CO", "MQ", "OO", "XE", "EV", "B6", "F9", "AS", "HA", "9E"]


def size_arg(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def main() -> None:
    out, size = sys.argv[1], size_arg(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 42)
    airports = ["".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(3)) for _ in range(300)]
    tails = ["N%03d%s" % (rng.randrange(1000), rng.choice(["AA", "UA", "DL", "WN", "XJ"])) for _ in range(4000)]
    written = 0
    with open(out, "w", newline="") as f:
        f.write(HEADER + "\n")
        lines = []
        while written < size:
            year = rng.choice((2006, 2007, 2008))
            month = rng.randint(1, 12)
            day = rng.randint(1, 28)
            crs_dep = rng.randint(5, 23) * 100 + rng.randrange(0, 60, 5)
            missing = rng.random() < 0.03
            dep_delay = int(rng.expovariate(1 / 12)) - 5
            dep = "NA" if missing else str(crs_dep + dep_delay)
            crs_arr = (crs_dep + 130 + rng.randrange(0, 300)) % 2400
            arr = "NA" if missing else str((crs_arr + dep_delay) % 2400)
            elapsed = "NA" if missing else "%.1f" % (rng.uniform(30, 400))
            arr_delay = "NA" if missing else str(dep_delay + rng.randint(-15, 15))
            row = (
                year,
                month,
                day,
                rng.randint(1, 7),
                dep,
                crs_dep,
                arr,
                crs_arr,
                rng.choice(CARRIERS),
                rng.randint(1, 7000),
                rng.choice(tails),
                elapsed,
                arr_delay,
                "NA" if missing else dep_delay,
                rng.choice(airports),
                rng.choice(airports),
                rng.randint(50, 2800),
                int(missing),
                "%d-%02d-%02d %02d:%02d:00" % (year, month, day, crs_dep // 100, crs_dep % 100),
            )
            line = ",".join(map(str, row)) + "\n"
            lines.append(line)
            written += len(line)
            if len(lines) == 10000:
                f.write("".join(lines))
                lines.clear()
        f.write("".join(lines))


if __name__ == "__main__":
    main()
