import sys, time, bmk
p = sys.argv[1]
m = bmk.load_model(p)
best = 1e9
for _ in range(5):
    t = time.process_time()
    for g in m.groups():
        for r in m.records(g):
            d = r.fields.copy() if hasattr(r.fields, "copy") else dict(r.fields)
            d.get("res0_addr")
    best = min(best, time.process_time() - t)
print(f"records+copy best {best*1e3:.1f} ms")
