import csv,math,sys
d=sys.argv[1]
def load(p):
    r={}
    for row in csv.DictReader(open(p+'/results.csv')):
        if row['status']=='ok': r[row['pattern']]=float(row['seconds'])
    return r
def gm(xs): return math.exp(sum(math.log(x) for x in xs)/len(xs))
print("pair  time new/old (geomean over patterns)  reads  writes")
allr=[]
for i in (1,2,3):
    o=load(f'{d}/k-old-{i}'); n=load(f'{d}/k-new-{i}')
    ps=sorted(set(o)&set(n))
    r=[n[p]/o[p] for p in ps]; allr.append(r)
    print(i, f"{gm(r):.3f}", f"{gm([n[p]/o[p] for p in ps if p[0]=='r']):.3f}", f"{gm([n[p]/o[p] for p in ps if p[0]=='w']):.3f}")
