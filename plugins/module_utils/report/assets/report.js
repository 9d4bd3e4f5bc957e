
(function(){
  var started = performance.now();
  var D = JSON.parse(document.getElementById('verify-data').textContent);
  var parsed = performance.now();
  var STR = D.strings, ITEMS = D.items, VARS = D.variables, CODES = D.codes, LABELS = D.labels;
  var HOSTS = D.hosts;            // [name, host status, sub (string index), [tag indexes], reason (string index or -1), status codes, [item indexes]]
  var PAGE = 100;
  var table = document.getElementById('matrix'), tbody = table.tBodies[0], headRow = table.tHead.rows[0];
  var details = document.getElementById('details'), shown = document.getElementById('shown');
  var fStatus = document.getElementById('filter-status'), fTag = document.getElementById('filter-group');
  var fVar = document.getElementById('filter-var'), fHost = document.getElementById('filter-host');
  var only = document.getElementById('only-problems');
  var list = [], next = 0, columns = [];
  var PROBLEMS = {drift: 1, error: 1};

  function text(value) {
    if (value === true) { return 'true'; }
    if (value === false) { return 'false'; }
    if (value === null || value === undefined) { return 'None'; }
    return String(value);
  }
  // The evidence of one cell: the same lines as verify_report.cell_evidence() (the JUnit file's).
  function evidence(host, name, item) {
    var lines = [name + ' on ' + host + ': ' + item.status];
    if (item.resolved_name && item.resolved_name !== name) { lines.push('name on this server: ' + item.resolved_name); }
    lines.push('desired: ' + text(item.desired));
    if (item.runtime !== null && item.runtime !== undefined) { lines.push('running (GLOBAL): ' + item.runtime); }
    var c = item.configured;
    if (c) { lines.push('configured: ' + text(c.value) + ' (' + c.file + ':' + c.line + ' [' + c.group + '])'); }
    else if (item.resolved_name) { lines.push('configured: not in any option file'); }
    if (item.command_line) { lines.push('command line: ' + text(item.command_line.text)); }
    if (item.persisted !== null && item.persisted !== undefined) { lines.push('persisted: ' + item.persisted); }
    var st = item.startup || {};
    if (st.read_at) {
      lines.push('a restart brings: ' + (st.value !== null && st.value !== undefined ? text(st.value) : 'the default') +
                 ', from ' + st.source);
    } else if (st.state === 'unavailable') { lines.push('a restart brings: not known here (option files not read)'); }
    if (item.origin) { lines.push('running value from: ' + item.origin + (item.origin_path ? ' (' + item.origin_path + ')' : '')); }
    if (item.dynamic !== null && item.dynamic !== undefined) { lines.push('dynamic: ' + (item.dynamic ? 'yes' : 'no (read-only at runtime)')); }
    if (item.default !== null && item.default !== undefined) { lines.push('default: ' + item.default); }
    (item.notes || []).forEach(function(n){ lines.push('note: ' + n); });
    return lines.join('\n');
  }
  function option(select, value, label) {
    var o = document.createElement('option');
    o.value = value; o.textContent = label; select.appendChild(o);
  }
  // Filters: what exists in the data only.
  (function(){
    var tags = {};
    HOSTS.forEach(function(h){ h[3].forEach(function(t){ tags[t] = (tags[t] || 0) + 1; }); });
    Object.keys(tags).map(Number).sort(function(a, b){ return STR[a] < STR[b] ? -1 : 1; }).forEach(function(t){
      option(fTag, String(t), STR[t] + ' (' + tags[t] + ')');
    });
    VARS.forEach(function(v, i){ option(fVar, String(i), v); });
  })();

  function matches(h) {
    var s = fStatus.value, t = fTag.value, v = fVar.value, q = fHost.value.trim().toLowerCase();
    if (q && h[0].toLowerCase().indexOf(q) < 0) { return false; }
    if (t && h[3].indexOf(Number(t)) < 0) { return false; }
    if (s) {
      if (s.charAt(0) === 'h') { if (h[1] !== s.slice(2)) { return false; } }
      else {
        var code = CODES[s.slice(2)];
        if (v) { if (h[5].charAt(Number(v)) !== code) { return false; } }
        else if (h[5].indexOf(code) < 0) { return false; }
      }
    }
    return true;
  }
  function header() {
    while (headRow.cells.length > 1) { headRow.deleteCell(1); }
    columns = fVar.value ? [Number(fVar.value)] : VARS.map(function(v, i){ return i; });
    columns.forEach(function(i){
      var th = document.createElement('th');
      th.className = 'var'; th.setAttribute('data-var', VARS[i]); th.textContent = VARS[i];
      headRow.appendChild(th);
    });
  }
  function row(h) {
    var tr = document.createElement('tr'), host = h[0], status = h[1];
    tr.className = 'hostrow' + (only.checked && !PROBLEMS[status] ? ' hidden' : '');
    tr.setAttribute('data-host', host); tr.setAttribute('data-status', status);
    var th = document.createElement('th'), small = document.createElement('small');
    th.className = 'host st-' + status; th.textContent = host; small.textContent = STR[h[2]];
    th.appendChild(small); tr.appendChild(th);
    if (status === 'error' && h[6].length === 0) {
      var td = document.createElement('td'), reason = h[4] >= 0 ? STR[h[4]] : 'error';
      td.className = 'cell hosterror st-error'; td.colSpan = Math.max(columns.length, 1);
      td.setAttribute('data-host', host); td.setAttribute('data-status', 'error'); td.title = reason;
      td.textContent = 'error: ' + reason; tr.appendChild(td);
      return tr;
    }
    columns.forEach(function(i){
      var td = document.createElement('td'), name = VARS[i], index = h[6][i];
      td.setAttribute('data-host', host); td.setAttribute('data-var', name);
      if (index === undefined || index < 0) {
        td.className = 'cell st-none'; td.setAttribute('data-status', 'none');
        td.title = name + ': not verified on ' + host; td.textContent = '\u2013';
      } else {
        var item = ITEMS[index];
        td.className = 'cell st-' + item.status; td.setAttribute('data-status', item.status);
        td.title = evidence(host, name, item); td.textContent = LABELS[item.status] || item.status;
      }
      tr.appendChild(td);
    });
    return tr;
  }
  // Rows are made as they come into view: PAGE visible rows at a time.
  function more() {
    var fragment = document.createDocumentFragment(), visible = 0;
    while (next < list.length && visible < PAGE) {
      var tr = row(HOSTS[list[next++]]);
      if (tr.className === 'hostrow') { visible++; }
      fragment.appendChild(tr);
    }
    tbody.appendChild(fragment);
    shown.textContent = 'showing ' + tbody.rows.length + ' of ' + list.length + ' matching hosts (' + HOSTS.length + ' in all)';
    shown.setAttribute('data-matching', String(list.length));
  }
  function refilter() {
    list = [];
    for (var i = 0; i < HOSTS.length; i++) { if (matches(HOSTS[i])) { list.push(i); } }
    next = 0; tbody.textContent = ''; header(); more();
  }
  var sentinel = document.getElementById('more');
  if ('IntersectionObserver' in window) {
    new IntersectionObserver(function(entries){
      if (entries[0].isIntersecting && next < list.length) { more(); }
    }, {rootMargin: '600px'}).observe(sentinel);
  }
  sentinel.addEventListener('click', function(){ more(); });

  function show(cell) {
    var sel = document.querySelector('td.cell.selected');
    if (sel) { sel.classList.remove('selected'); }
    cell.classList.add('selected');
    var host = cell.getAttribute('data-host'), name = cell.getAttribute('data-var');
    details.setAttribute('data-host', host);
    details.setAttribute('data-var', name || '');
    var h = null;
    for (var i = 0; i < HOSTS.length; i++) { if (HOSTS[i][0] === host) { h = HOSTS[i]; break; } }
    var index = (h && name) ? h[6][VARS.indexOf(name)] : -1;
    if (index === undefined || index < 0) {
      details.textContent = host + ': ' + (h && h[4] >= 0 ? STR[h[4]] : 'not verified'); return;
    }
    details.textContent = cell.getAttribute('title') + '\n\n' + JSON.stringify(ITEMS[index], null, 2);
  }
  tbody.addEventListener('click', function(event){
    var cell = event.target.closest('td.cell');
    if (cell) { show(cell); }
  });
  only.addEventListener('change', function(){
    Array.prototype.forEach.call(tbody.rows, function(r){
      r.classList.toggle('hidden', only.checked && !PROBLEMS[r.getAttribute('data-status')]);
    });
    if (only.checked) { more(); }
  });
  [fStatus, fTag, fVar].forEach(function(f){ f.addEventListener('change', refilter); });
  var typing = null;
  fHost.addEventListener('input', function(){ clearTimeout(typing); typing = setTimeout(refilter, 150); });
  refilter();
  document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
  document.body.setAttribute('data-timing', JSON.stringify({script: Math.round(started), parsed: Math.round(parsed),
                                                            rendered: Math.round(performance.now())}));
  document.body.setAttribute('data-ready', 'true');
})();
