import csv, math, sys
def load(d):
    return {r['pattern']: float(r['seconds']) for r in csv.DictReader(open(f'{d}/results.csv')) if r['status']=='ok'}
names=sys.argv[1:]
runs={k:load(k) for k in names}
pats=list(runs[names[0]])
def gm(xs): return math.exp(sum(map(math.log,xs))/len(xs))
print("| pattern | " + " | ".join(names) + " |"); print("|---"*(len(names)+1)+"|")
for p in pats:
    print(f"| {p} | " + " | ".join(f"{runs[k].get(p,float('nan')):.4f}" for k in names) + " |")
print()
for i,a in enumerate(names):
    for b in names[i+1:]:
        print(f"- {b} / {a}: geometric mean of the time ratio {gm([runs[b][p]/runs[a][p] for p in pats]):.3f}")
