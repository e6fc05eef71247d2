import csv,glob,math,sys,collections as C
# ratio.py DIR: per round, new / old time, geometric mean over the patterns, per method and op; and old / old between rounds
d=sys.argv[1]; T=C.defaultdict(dict)
for f in glob.glob(d+'/k-*/results.csv'):
    lab=f.split('/')[-2][2:]
    for r in csv.DictReader(open(f)):
        if r['status']=='ok': T[lab][(r['method'],r['op'],r['pattern'])]=float(r['seconds'])
def gm(a,b,m,op):
    ks=[k for k in T[a] if k[0]==m and k[1]==op and k in T[b]]
    return math.exp(sum(math.log(T[a][k]/T[b][k]) for k in ks)/len(ks)) if ks else float('nan')
n=max(int(l.split('-')[1]) for l in T)
print("| method | op | new / old, rounds 1..%d | old / old (round i+1 against i) |"%n); print("|---|---|---|---|")
for m in ('ddio-tcp','ddio-ucx'):
    for op in ('read','write'):
        a=", ".join("%.2f"%gm(f"new-{i}",f"old-{i}",m,op) for i in range(1,n+1))
        b=", ".join("%.2f"%gm(f"old-{i+1}",f"old-{i}",m,op) for i in range(1,n))
        print(f"| {m} | {op} | {a} | {b} |")
