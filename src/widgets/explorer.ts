/**
 * The entry of TileLab's widget bundle (`tilelab/views/static/explorer.js`):
 * anywidget calls `render`, which draws the view the model's `kind` names.
 */

import { renderCompare } from './compare';
import { h } from './dom';
import { IRenderProps } from './model';
import { renderExplorer } from './shell';
import { renderTuning } from './tuning';

function render({ model, el }: IRenderProps): () => void {
  el.classList.add('tilelab-widget');
  switch (model.get('kind')) {
    case 'explorer':
      return renderExplorer(model, el);
    case 'compare':
      return renderCompare(model, el);
    case 'tuning':
      return renderTuning(model, el);
    default:
      el.appendChild(h('p', 'tl-error', `TileLab cannot draw a ${JSON.stringify(model.get('kind'))} view.`));
      return () => undefined;
  }
}

export default { render };
