// The status page's charts over /debug/ui/stats: certificates per minute, refusals by reason and
// push latency.

function renderStats(s: UiStats): void {
  const certs = el('div');
  if (!s.ca) certs.appendChild(el('p', 'the CA does not run in this server', { class: 'empty' }));
  certs.appendChild(el('p', `issued: ${s.issuedTotal}, refused: ${s.deniedTotal}`, { id: 'cert-totals' }));
  certs.appendChild(
    bars(
      s.perMinute.map((m) => ({ label: m.minute.slice(11, 16), value: m.issued })),
      'certificates issued per minute',
    ),
  );
  fill('certs', certs);
  fill(
    'denials',
    table(
      ['source', 'reason', 'count'],
      s.denials.map((d) => row([d.source, d.reason, String(d.count)], { 'data-denial': d.reason })),
      'no refusals',
    ),
  );
  const h = s.pushLatency;
  if (!h) {
    fill('latency', el('p', 'the xDS server does not run in this server', { class: 'empty' }));
    return;
  }
  const box = el('div');
  const mean = h.count ? ((1000 * h.sumSeconds) / h.count).toFixed(2) : '0';
  box.appendChild(el('p', `${h.count} pushes, mean ${mean} ms`));
  box.appendChild(
    bars(
      h.buckets.map((b) => ({
        label: b.le === '+Inf' ? '> last' : `\u2264 ${1000 * Number(b.le)} ms`,
        value: b.count,
      })),
      'push latency',
    ),
  );
  fill('latency', box);
}
