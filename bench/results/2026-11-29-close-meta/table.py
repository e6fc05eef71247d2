import glob,sys,statistics as st,collections as C
# table.py DIR LABEL...: per case, P, method and build, the phase time and its stages (ms, medians over every phase of every round)
d=sys.argv[1]; labs=sys.argv[2:]
R=C.defaultdict(list)
for f in glob.glob(d+'/*/*.txt'):
    lab=f.split('/')[-2].rsplit('-',1)[0]; meth,P=f.split('/')[-1][:-4].split('-')
    for line in open(f):
        if not line.startswith('RESULT'): continue
        r=line.strip().split(',')
        case=r[1].split('x')[0]
        R[(case,P,meth,lab)].append([float(r[12])*1e3]+[float(x)*1e3 for x in r[15:19]])
print("| case | P | method | variant | n | phase ms p50 (p25-p75) | open | calls | sync | close |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(R, key=lambda k:(k[0],k[1],k[2],labs.index(k[3]) if k[3] in labs else 9)):
    v=R[k]; q=lambda i: st.quantiles([x[i] for x in v], n=4)
    m=lambda i: st.median(x[i] for x in v)
    a=q(0)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(v)} | {m(0):.2f} ({a[0]:.2f}-{a[2]:.2f}) | {m(1):.2f} | {m(2):.2f} | {m(3):.2f} | {m(4):.2f} |")
