import { escapeHtml, html, trusted } from './html';

describe('html escapes every interpolated value', () => {
  it('turns markup and script into text', () => {
    const value = `<script>alert("x")</script><img src=x onerror='y'>&\``;
    expect(html`<td>${value}</td>`.text).toBe(
      '<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;&#96;</td>',
    );
  });

  it('keeps quoted attribute values closed', () => {
    expect(html`<a title="${'" onclick="x'}"></a>`.text).toBe(
      '<a title="&quot; onclick=&quot;x"></a>',
    );
  });

  it('joins arrays, drops null, undefined and false, and nests Html unescaped', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`${[inner, null, undefined, false, 1]}`.text).toBe('<b>&lt;i&gt;</b>1');
    expect(html`${trusted('<svg/>')}`.text).toBe('<svg/>');
    expect(escapeHtml(0)).toBe('0');
  });
});
