/**
 * The console's one stylesheet, served at `/console/assets/console.css` (the console's CSP
 * allows styles from Weft's own origin and nothing inline). Light and dark follow the
 * operator's system setting.
 */
export const CONSOLE_CSS = `
:root{--bg:#f7f7f8;--panel:#fff;--text:#18181b;--muted:#6b7280;--line:#e4e4e7;--accent:#4338ca;--accent-text:#fff;--ok:#15803d;--warn:#b45309;--bad:#b91c1c;--code:#f4f4f5;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#111113;--panel:#1b1b1f;--text:#ececef;--muted:#a1a1aa;--line:#2e2e33;--accent:#818cf8;--accent-text:#111113;--ok:#4ade80;--warn:#fbbf24;--bad:#f87171;--code:#26262b}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--text)}
a{color:var(--accent)}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.6rem 1.25rem;background:var(--panel);border-bottom:1px solid var(--line)}
header.top .brand{font-weight:700;letter-spacing:.02em}
header.top nav{display:flex;flex-wrap:wrap;gap:.25rem;flex:1}
header.top nav a{padding:.3rem .6rem;border-radius:6px;text-decoration:none;color:var(--text)}
header.top nav a[aria-current=page]{background:var(--code);font-weight:600}
header.top .who{color:var(--muted);display:flex;align-items:center;gap:.5rem}
main{max-width:1200px;margin:0 auto;padding:1.25rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1rem;overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.03em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;background:var(--code);border-radius:4px}
code{padding:0 .25rem}
pre{padding:.6rem;overflow-x:auto;margin:.25rem 0;max-height:24rem}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.75rem;font-weight:600;border:1px solid currentColor}
.badge.ok{color:var(--ok)}.badge.bad{color:var(--bad)}.badge.warn{color:var(--warn)}.badge.muted{color:var(--muted)}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem;margin-bottom:1rem}
.figure{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.75rem}
.figure b{display:block;font-size:1.35rem}
.figure span{color:var(--muted);font-size:.8rem}
form.inline{display:inline}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:1rem}
form.filters label,form.stack label{display:flex;flex-direction:column;font-size:.8rem;color:var(--muted);gap:.15rem}
form.stack{display:grid;gap:.6rem;max-width:28rem}
input,select{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--panel);color:var(--text)}
button{font:inherit;padding:.35rem .8rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-text);cursor:pointer}
button.secondary{background:transparent;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
.actions{display:flex;flex-wrap:wrap;gap:.35rem}
.notice{border-left:4px solid var(--ok);background:var(--panel);padding:.6rem 1rem;margin-bottom:1rem}
.error{border-left:4px solid var(--bad);background:var(--panel);padding:.6rem 1rem;margin-bottom:1rem}
.muted{color:var(--muted)}
.pager{display:flex;gap:1rem;margin-top:.75rem}
.chart svg{width:100%;height:auto;max-height:180px}
.chart .runs{fill:var(--accent)}.chart .failed{fill:var(--bad)}.chart .calls{fill:var(--muted)}
.chart .legend{display:flex;gap:1rem;font-size:.8rem;color:var(--muted)}
.signin{max-width:26rem;margin:4rem auto}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0}
dl.fields dt{color:var(--muted)}dl.fields dd{margin:0}
input.link{width:100%}
`;
