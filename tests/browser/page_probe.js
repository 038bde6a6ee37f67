// Evaluated by report_browser_test.py in each loaded report (DevTools evaluation is not
// subject to the page's CSP). Returns a JSON-able object; `problems` lists what is wrong
// with the DOM: elements or attributes the report never writes, which would mean that
// text from a trace was parsed as markup.
(() => {
  const ALLOWED_TAGS = new Set([
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "h4", "p", "span", "strong",
    "code", "pre", "div", "table", "thead", "tbody", "tr", "th", "td", "figure", "ul", "li", "hr", "footer",
    "svg", "rect", "text", "line", "polyline", "polygon", "circle"]);
  const FETCHING = new Set(["src", "href", "xlink:href", "action", "formaction", "srcset", "poster", "data",
                            "background", "ping", "lowsrc", "codebase", "manifest", "cite", "longdesc"]);
  const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
  const problems = [];
  const clip = (s) => (s.length > 160 ? s.slice(0, 160) + "…" : s);
  const tags = {};
  for (const el of document.getElementsByTagName("*")) {
    const t = el.localName;
    tags[t] = (tags[t] || 0) + 1;
    if (!ALLOWED_TAGS.has(t)) problems.push(`element <${t}> parsed: ${clip(el.outerHTML)}`);
    for (const a of el.attributes) {
      const n = a.name.toLowerCase();
      if (n.startsWith("on")) problems.push(`event handler attribute ${n}="${clip(a.value)}" on <${t}>`);
      if (FETCHING.has(n)) problems.push(`URL attribute ${n}="${clip(a.value)}" on <${t}>`);
      if (n === "style" && /url\s*\(|@import|expression\s*\(|javascript:/i.test(a.value))
        problems.push(`style attribute with a URL on <${t}>: ${clip(a.value)}`);
    }
  }
  const metas = [...document.querySelectorAll("meta[http-equiv]")];
  if (metas.length !== 1 || metas[0].httpEquiv.toLowerCase() !== "content-security-policy" ||
      metas[0].content !== CSP || metas[0].parentElement !== document.head)
    problems.push("http-equiv metas are not exactly the report's CSP: " +
                  metas.map((m) => clip(m.outerHTML)).join(" "));
  const styles = [...document.querySelectorAll("style")];
  if (styles.length !== 1 || styles[0].parentElement !== document.head)
    problems.push(`${styles.length} <style> elements (the report writes one, in <head>)`);
  for (const s of styles)
    if (/url\s*\(|@import/i.test(s.textContent)) problems.push(`<style> with a URL: ${clip(s.textContent)}`);
  for (const sheet of document.styleSheets)
    if (sheet.href) problems.push(`style sheet loaded from ${sheet.href}`);
  if (document.querySelectorAll("title").length !== 1 + document.querySelectorAll("svg title").length)
    problems.push("more than one document <title>");

  // Our own words must read left to right: an unclosed U+202E (RIGHT-TO-LEFT OVERRIDE) in a
  // name would otherwise reverse the report's text after it. Checked on HTML text only.
  const WORDS = /\b(generated|Stallscope|events|Synchronising|saves|while|waited|Kineto|Summary|Findings|Evidence|before|after)\b/g;
  const reversed = [];
  let wordsChecked = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const charRect = (node, i) => {
    const r = document.createRange();
    r.setStart(node, i);
    r.setEnd(node, i + 1);
    return r.getBoundingClientRect();
  };
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest("svg")) continue;
    for (const m of node.data.matchAll(WORDS)) {
      const a = charRect(node, m.index), b = charRect(node, m.index + m[0].length - 1);
      if (a.width === 0 || b.width === 0 || Math.abs(a.top - b.top) > 1) continue;  // hidden or wrapped
      ++wordsChecked;
      if (a.left >= b.left && reversed.length < 5)
        reversed.push(`"${m[0]}" in "${clip(node.data)}" renders right to left`);
    }
  }

  const svgText = [...document.querySelectorAll("svg text, svg title")].map((t) => t.textContent).join("\n");
  return {
    problems, reversed, wordsChecked, tags,
    title: document.title,
    h1: (document.querySelector("h1") || {}).innerText || "",
    charset: document.characterSet,
    contentType: document.contentType,
    scripts: document.scripts.length,
    links: document.links.length,
    images: document.images.length,
    embeds: document.embeds.length + document.plugins.length + document.forms.length,
    text: document.body ? document.body.innerText : "",
    svgText,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    bodyHeight: document.body ? document.body.getBoundingClientRect().height : 0,
    tripwire: window.__stallscopeTripwire || null,
  };
})()
