const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The one place the server writes HTML: a fixed shell; its only variable text is escaped. */
export function shellHtml(label: string): string {
  const where = label.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Logbook inspector</title>
<link rel="icon" href="/ui/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/assets/inspector.css">
<script type="module" src="/ui/assets/main.js"></script>
</head>
<body>
<a class="skip" href="#app">Skip to the content</a>
<header class="top"><a class="brand" href="/ui/">Logbook inspector</a><span class="where">${where}</span></header>
<main id="app" tabindex="-1"><p>Loading…</p><noscript><p>The inspector needs JavaScript.</p></noscript></main>
</body>
</html>
`;
}
