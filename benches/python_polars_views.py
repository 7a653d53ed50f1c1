"""Into polars: fastcsv.read_arrow as utf8 or string_view columns against
polars.read_csv (needs polars and pyarrow).

    python3 benches/python_polars_views.py FILE
"""
import sys, time, fastcsv, polars as pl, pyarrow as pa
p=sys.argv[1]
def t(name, f, n=5):
    ts=[]
    for _ in range(n):
        t0=time.perf_counter(); r=f(); ts.append(time.perf_counter()-t0)
    ts.sort(); print(f"  {name}: {ts[n//2]:.3f}", flush=True); return r
print(p)
t("polars.read_csv (strings)", lambda: pl.read_csv(p, infer_schema=False))
t("polars.read_csv", lambda: pl.read_csv(p))
t("fastcsv -> polars (utf8)", lambda: pl.DataFrame(fastcsv.read_arrow(p)))
a=t("fastcsv -> polars (string_view)", lambda: pl.DataFrame(fastcsv.read_arrow(p, string_view=True)))
t("fastcsv infer -> polars (string_view)", lambda: pl.DataFrame(fastcsv.read_arrow(p, types="infer", string_view=True)))
t("fastcsv -> pa.table (string_view)", lambda: pa.table(fastcsv.read_arrow(p, string_view=True)))
b=pl.read_csv(p, infer_schema=False)
print("  equal:", a.equals(b))
