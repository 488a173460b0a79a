// Reads a JSON list of HTML strings on stdin and writes them as JupyterLab shows an untrusted notebook's
// text/html: through @jupyterlab/apputils' Sanitizer (the real one, from the project's node_modules).
import { Sanitizer } from '@jupyterlab/apputils/lib/sanitizer.js';

const sanitizer = new Sanitizer();
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', () => {
  const pages = JSON.parse(input);
  process.stdout.write(JSON.stringify(pages.map(page => sanitizer.sanitize(page))));
});
