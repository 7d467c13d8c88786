const boxes=[...document.querySelectorAll('#filters input')];
const rows=[...document.querySelectorAll('#items tbody tr')];
function apply(){const on=boxes.filter(b=>b.checked).map(b=>b.dataset.filter);let n=0;
 for(const r of rows){const show=on.every(f=>r.dataset[f]!=='0');r.style.display=show?'':'none';if(show)n++;}
 document.getElementById('shown').textContent=n;}
boxes.forEach(b=>b.addEventListener('change',apply));
// report.html#filter=wrong,split opens with those filters on
const wanted=location.hash.match(/^#filter=([a-z,]+)$/);
if(wanted){for(const f of wanted[1].split(',')){
 const b=boxes.find(x=>x.dataset.filter===f);if(b)b.checked=true;}apply();}
// Click a column header to sort by it; again to reverse. Numbers sort as numbers.
document.querySelectorAll('#items tr.sort th').forEach((th,col)=>th.addEventListener('click',()=>{
 const body=th.closest('table').tBodies[0];const asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
 [...body.rows].sort((a,b)=>{const x=a.cells[col].textContent,y=b.cells[col].textContent;
  const d=(parseFloat(x)-parseFloat(y))||x.localeCompare(y);return asc?d:-d;})
  .forEach(r=>body.appendChild(r));}));
