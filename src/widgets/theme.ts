/**
 * CodeMirror styling from JupyterLab's CSS variables: one theme that reads in
 * light and dark JupyterLab themes (and plain fallbacks elsewhere).
 */

import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

const v = (name: string, fallback: string): string => `var(--jp-${name}, ${fallback})`;

const highlight = HighlightStyle.define([
  { tag: t.meta, color: v('mirror-editor-meta-color', '#a626a4') },
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword], color: v('mirror-editor-keyword-color', '#008000'), fontWeight: 'bold' },
  { tag: [t.atom, t.bool, t.null], color: v('mirror-editor-atom-color', '#88f') },
  { tag: t.number, color: v('mirror-editor-number-color', '#080') },
  { tag: [t.definition(t.variableName), t.function(t.definition(t.variableName))], color: v('mirror-editor-def-color', '#00f') },
  { tag: t.function(t.variableName), color: v('mirror-editor-def-color', '#00f') },
  { tag: t.variableName, color: v('mirror-editor-variable-color', '#212121') },
  { tag: [t.special(t.variableName), t.self], color: v('mirror-editor-variable-2-color', '#05a') },
  { tag: [t.typeName, t.className, t.standard(t.typeName)], color: v('mirror-editor-variable-3-color', '#085') },
  { tag: t.propertyName, color: v('mirror-editor-property-color', '#05a') },
  { tag: t.operator, color: v('mirror-editor-operator-color', '#a2f'), fontWeight: 'bold' },
  { tag: t.comment, color: v('mirror-editor-comment-color', '#408080'), fontStyle: 'italic' },
  { tag: t.string, color: v('mirror-editor-string-color', '#ba2121') },
  { tag: [t.labelName, t.special(t.string), t.escape], color: v('mirror-editor-string-2-color', '#708') },
  { tag: t.bracket, color: v('mirror-editor-bracket-color', '#997') },
  { tag: t.punctuation, color: v('mirror-editor-punctuation-color', '#05a') },
  { tag: [t.processingInstruction, t.macroName], color: v('mirror-editor-meta-color', '#a626a4') },
  { tag: t.invalid, color: v('mirror-editor-error-color', '#f00') }
]);

function theme(dark: boolean): Extension {
  return EditorView.theme(
    {
      '&': {
        color: v('content-font-color1', '#1f2328'),
        backgroundColor: v('layout-color0', '#fff'),
        fontSize: v('code-font-size', '13px')
      },
      '.cm-scroller': { fontFamily: v('code-font-family', 'monospace'), lineHeight: v('code-line-height', '1.4') },
      // Wrap between tokens (at spaces), never inside an identifier unless it alone is wider than the pane.
      '.cm-lineWrapping, .cm-lineWrapping .cm-deletedLine': { wordBreak: 'normal', overflowWrap: 'break-word' },
      '.cm-content': { caretColor: v('content-font-color0', '#000') },
      '.cm-gutters': {
        backgroundColor: v('layout-color1', '#f6f8fa'),
        color: v('content-font-color3', '#8c959f'),
        borderRight: `1px solid ${v('border-color2', '#d0d7de')}`
      },
      '.cm-activeLine': { backgroundColor: 'transparent' },
      '&.cm-focused .cm-activeLine': { backgroundColor: dark ? 'rgba(255,255,255,0.04)' : 'rgba(0,0,0,0.03)' },
      '.cm-activeLineGutter': { backgroundColor: 'transparent', color: v('content-font-color1', '#1f2328') },
      '&.cm-focused': { outline: 'none' },
      '.cm-selectionBackground, &.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground': {
        backgroundColor: dark ? 'rgba(120,160,255,0.35)' : 'rgba(0,100,255,0.2)'
      },
      '.cm-searchMatch': { backgroundColor: 'rgba(255,200,0,0.35)', outline: '1px solid rgba(255,170,0,0.8)' },
      '.cm-searchMatch-selected': { backgroundColor: 'rgba(255,140,0,0.6)' },
      '.cm-panels': {
        backgroundColor: v('layout-color1', '#f6f8fa'),
        color: v('ui-font-color1', '#1f2328'),
        fontFamily: v('ui-font-family', 'sans-serif')
      },
      '.cm-panels input, .cm-panels button': { fontSize: '12px' },
      '.cm-textfield': {
        backgroundColor: v('input-background', v('layout-color0', '#fff')),
        color: v('ui-font-color0', '#000'),
        border: `1px solid ${v('border-color1', '#afb8c1')}`
      },
      '.cm-button': {
        backgroundImage: 'none',
        backgroundColor: v('layout-color2', '#eaeef2'),
        color: v('ui-font-color1', '#1f2328'),
        border: `1px solid ${v('border-color1', '#afb8c1')}`
      },
      '.cm-foldPlaceholder': {
        backgroundColor: v('layout-color2', '#eaeef2'),
        color: v('content-font-color2', '#57606a'),
        border: 'none'
      },
      // @codemirror/merge frames the note with U+299A, which Debian's fonts lack (a missing-glyph box): middle dots.
      '.cm-collapsedLines:before, .cm-collapsedLines:after': { content: '"···"' },
      '.cm-collapsedLines': {
        backgroundColor: v('layout-color2', '#eaeef2'),
        color: v('content-font-color2', '#57606a'),
        backgroundImage: 'none'
      },
      // Diffs: removed (left, or the deleted blocks of a unified diff) red, added green, on light and dark.
      '&.cm-merge-a .cm-changedLine, .cm-deletedChunk': { backgroundColor: 'rgba(248,81,73,0.14)' },
      '&.cm-merge-b .cm-changedLine, .cm-inlineChangedLine': { backgroundColor: 'rgba(46,160,67,0.14)' },
      '&.cm-merge-a .cm-changedText, .cm-deletedChunk .cm-deletedText': {
        backgroundColor: 'rgba(248,81,73,0.32)',
        backgroundImage: 'none'
      },
      '&.cm-merge-b .cm-changedText': { backgroundColor: 'rgba(46,160,67,0.32)', backgroundImage: 'none' },
      '.cm-insertedLine, .cm-deletedLine, .cm-deletedLine del': { textDecoration: 'none' },
      '.cm-changeGutter': { width: '3px', paddingLeft: '0' },
      '&.cm-merge-a .cm-changedLineGutter, .cm-deletedLineGutter': { backgroundColor: 'rgba(248,81,73,0.9)' },
      '&.cm-merge-b .cm-changedLineGutter': { backgroundColor: 'rgba(46,160,67,0.9)' }
    },
    { dark }
  );
}

/** Whether JupyterLab shows a dark theme now. */
export function isDark(): boolean {
  return document.body.dataset.jpThemeLight === 'false';
}

/** The theme and highlighting for the current JupyterLab theme. */
export function editorTheme(dark: boolean = isDark()): Extension {
  return [theme(dark), syntaxHighlighting(highlight)];
}

/** Call `callback` when JupyterLab switches between light and dark; returns the disconnect function. */
export function onThemeChange(callback: (dark: boolean) => void): () => void {
  const observer = new MutationObserver(() => callback(isDark()));
  observer.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light'] });
  return () => observer.disconnect();
}
