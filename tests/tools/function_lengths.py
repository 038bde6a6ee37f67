#!/usr/bin/env python3
"""No product function over LIMIT lines (issue 27): every function body in the product folders,
from its signature to its closing brace, comments and strings stripped; standard library only.
Usage: function_lengths.py SOURCE_DIR [LIMIT]. Exit 1 naming each longer function."""
import re,sys,os
def strip(src):
    # remove comments, string and char literals (keep newlines)
    out=[];i=0;n=len(src)
    while i<n:
        c=src[i]
        if src.startswith('//',i):
            j=src.find('\n',i); j=n if j<0 else j; i=j; continue
        if src.startswith('/*',i):
            j=src.find('*/',i+2); j=n if j<0 else j+2; out.append('\n'*src[i:j].count('\n')); i=j; continue
        m=re.match(r'R"([^(]*)\(',src[i:i+40])
        if m:
            end=')'+m.group(1)+'"'; j=src.find(end,i); j=n if j<0 else j+len(end)
            out.append('""'+'\n'*src[i:j].count('\n')); i=j; continue
        if c in '"\'':
            j=i+1
            while j<n and src[j]!=c:
                if src[j]=='\\': j+=1
                j+=1
            out.append(c+c); i=j+1; continue
        out.append(c); i+=1
    return ''.join(out)
def funcs(path):
    raw=open(path,errors='replace').read()
    raw='\n'.join('' if l.lstrip().startswith('#') else l for l in raw.split('\n'))
    s=strip(raw)
    stack=[];res=[];last=0;line=1;starts=[]
    pos_line=[]
    i=0
    for i,c in enumerate(s):
        if c=='\n': line+=1
        elif c=='{':
            head=s[last:i]
            kind='block'
            if all(k in('ns','class') for k,_,_ in stack):
                h=' '.join(head.split())
                if re.match(r'^(namespace|extern)\b',h) or h=='' : kind='ns'
                elif re.match(r'^(template\s*<.*>\s*)?(struct|class|union|enum)\b',h) and '(' not in h.split('{')[0][:h.find(':') if ':' in h else len(h)]: kind='class'
                elif '(' in h and ')' in h and not re.search(r'=\s*$',h) and not h.endswith('= '):
                    kind='func'
                    name=h[:120]
                else: kind='init'
            stack.append((kind,line,head.strip().split('\n')[-1][:100] if kind=='func' else ''))
            last=i+1
        elif c=='}':
            if stack:
                k,l0,name=stack.pop()
                if k=='func':
                    # signature start line: count newlines in head back
                    res.append((line-l0+1,l0,name))
            last=i+1
        elif c==';':
            last=i+1
    return res
root=sys.argv[1]; limit=int(sys.argv[2]) if len(sys.argv)>2 else 150
dirs=['base','model','importers','analysis','scene','reports','workspace','capture','app']
out=[]
for d in dirs:
    for dp,dn,fn in os.walk(os.path.join(root,d)):
        for f in fn:
            if f.endswith(('.cpp','.h')):
                p=os.path.join(dp,f)
                for n,l0,name in funcs(p):
                    if n>limit: out.append((n,os.path.relpath(p,root)+':'+str(l0),' '.join(name.split())))
for o in sorted(out,reverse=True): print(*o)
seen=sum(1 for d in dirs for _,_,fn in os.walk(os.path.join(root,d)) for f in fn if f.endswith(('.cpp','.h')))
if seen < 100:
    sys.exit('function_lengths: only %d files under %s' % (seen, root))
if out:
    sys.exit('function_lengths: %d functions over %d lines' % (len(out), limit))
print('function_lengths: %d files, no function over %d lines' % (seen, limit))
