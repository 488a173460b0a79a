/**
 * Cell colours of the layout grid, from the palette Python sends
 * (`tilelab.views.layout.PALETTE`: the snapshot draws from the same one) and
 * the JupyterLab theme: light themes get pale cells with dark text, dark
 * themes deep cells with light text.
 */

export interface IPalette {
  /** Categorical hues of warps 0, 1, 2, ... (cycled). */
  hues: number[];
  /** Shades per warp: lane % shades picks one, so neighbouring threads differ. */
  shades: number;
}

export interface ITheme {
  dark: boolean;
  /** The page behind the cells (grid lines are gaps showing it). */
  background: string;
  /** Gutter text (row and column numbers). */
  muted: string;
  /** Outline of the hovered thread's cells. */
  accent: string;
  font: string;
}

export interface ICellColour {
  fill: string;
  text: string;
}

const GOLDEN_ANGLE = 137.508;

/** Read the theme from JupyterLab's CSS variables where `node` sits (with plain fallbacks). */
export function readTheme(node: HTMLElement): ITheme {
  const style = getComputedStyle(node);
  const variable = (name: string, fallback: string): string => style.getPropertyValue(name).trim() || fallback;
  const background = variable('--jp-layout-color0', '');
  const dark =
    background !== ''
      ? luminance(background) < 0.4
      : document.body.dataset.jpThemeLight === 'false';
  return {
    dark,
    background: background || (dark ? '#111111' : '#ffffff'),
    muted: variable('--jp-ui-font-color2', dark ? '#aaaaaa' : '#666666'),
    accent: variable('--jp-ui-font-color0', dark ? '#ffffff' : '#000000'),
    font: variable('--jp-code-font-family', 'monospace')
  };
}

/** Relative luminance (0..1) of a CSS colour string the browser can parse. */
function luminance(colour: string): number {
  const probe = document.createElement('canvas').getContext('2d');
  if (probe === null) {
    return 1;
  }
  probe.fillStyle = colour;
  const parsed = probe.fillStyle; // normalised to #rrggbb or rgba(...)
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(parsed);
  const rgb = hex
    ? hex.slice(1).map(part => parseInt(part, 16))
    : (/rgba?\(([^)]+)\)/.exec(parsed)?.[1].split(',').slice(0, 3).map(Number) ?? [255, 255, 255]);
  return (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
}

/** Caches the CSS strings of cell colours for one palette and theme. */
export class Colours {
  constructor(palette: IPalette, theme: ITheme) {
    this._palette = palette;
    this._theme = theme;
  }

  get theme(): ITheme {
    return this._theme;
  }

  /** Warp `warp`'s categorical hue, shaded by lane (the snapshot's colours in a light theme). */
  warp(warp: number, lane: number): ICellColour {
    const { hues, shades } = this._palette;
    return this._cell(hues[((warp % hues.length) + hues.length) % hues.length], lane % shades);
  }

  /** A golden-angle hue per value (threads, local indices, lanes, banks): neighbours differ. */
  categorical(value: number): ICellColour {
    return this._cell(Math.round((value * GOLDEN_ANGLE) % 360), 0);
  }

  /** Cells outside the warp filter. */
  get muted(): ICellColour {
    return this._theme.dark ? { fill: '#2a2a2a', text: '#6e6e6e' } : { fill: '#ececec', text: '#9a9a9a' };
  }

  private _cell(hue: number, shade: number): ICellColour {
    const key = hue * 16 + shade;
    let colour = this._cache.get(key);
    if (colour === undefined) {
      colour = this._theme.dark
        ? { fill: `hsl(${hue}, 42%, ${30 + 4 * shade}%)`, text: '#f2f2f2' }
        : { fill: `hsl(${hue}, 62%, ${82 - 5 * shade}%)`, text: '#111111' };
      this._cache.set(key, colour);
    }
    return colour;
  }

  private _palette: IPalette;
  private _theme: ITheme;
  private _cache = new Map<number, ICellColour>();
}
