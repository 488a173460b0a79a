/**
 * TileLab's JupyterLab plugin: a right-side panel listing the kernels compiled
 * and the tuning runs of the active notebook's kernel; in notebooks, TileLab
 * views that fall back to their snapshot and links from a view to a cell line.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { followLineLinks, keepOpenedClean } from './cells';
import { useViewRenderer } from './fallback';
import { TileLabPanel } from './panel';

const OPEN_PANEL = 'tilelab:open-panel';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'tilelab:plugin',
  description: 'The TileLab panel: kernels compiled and tuning runs of the active notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ITranslator, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    translator: ITranslator | null,
    restorer: ILayoutRestorer | null
  ): void => {
    const trans = (translator ?? nullTranslator).load('tilelab');
    const panel = new TileLabPanel({
      tracker,
      trans,
      show: widget => {
        if (!widget.isAttached) {
          app.shell.add(widget, 'main');
        }
        app.shell.activateById(widget.id);
      }
    });
    app.shell.add(panel, 'right', { rank: 600 });
    if (restorer !== null) {
      restorer.add(panel, panel.id);
    }
    // Every notebook: saved views show their snapshot once their kernel is gone, line links reach the
    // editor, and opening it does not mark it modified.
    // A widget extension runs as each notebook is created, before its file is read.
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (notebook: NotebookPanel): void => {
        useViewRenderer(notebook);
        followLineLinks(notebook);
        keepOpenedClean(notebook);
      }
    });
    app.commands.addCommand(OPEN_PANEL, {
      label: trans.__('TileLab Panel'),
      caption: trans.__('Show the kernels and tuning runs of the active notebook'),
      execute: () => app.shell.activateById(panel.id)
    });
  }
};

export default plugin;
