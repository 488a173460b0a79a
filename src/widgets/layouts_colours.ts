/**
 * Cell colours of the layout grid, from the palette in the tab's data
 * (`tilelab.views.layouts.data.palette`: the snapshot draws from the same one)
 * and the JupyterLab theme: light themes get pale cells with dark text, dark
 * themes deep cells with light text.
 */

/** The cells of one theme (HSL, saturation and lightness in %). */
export interface IThemeCells {
  saturation: number;
  lightness: number;
  /** Lightness added per shade (lane % shades). */
  shade_step: number;
  text: string;
  /** Fill and text of cells outside the warp filter. */
  muted: [string, string];
}

export interface IPalette {
  /** Categorical hues of warps 0, 1, 2, ... (cycled). */
  hues: number[];
  /** Shades per warp: lane % shades picks one, so neighbouring threads differ. */
  shades: number;
  /** Hue step of categorical colours (threads, local indices, lanes, banks): neighbours differ. */
  golden_angle: number;
  light: IThemeCells;
  dark: IThemeCells;
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
    return this._cell(Math.round((value * this._palette.golden_angle) % 360), 0);
  }

  /** Cells outside the warp filter. */
  get muted(): ICellColour {
    const [fill, text] = this._cells.muted;
    return { fill, text };
  }

  private _cell(hue: number, shade: number): ICellColour {
    const key = hue * 16 + shade;
    let colour = this._cache.get(key);
    if (colour === undefined) {
      const cells = this._cells;
      colour = { fill: `hsl(${hue}, ${cells.saturation}%, ${cells.lightness + cells.shade_step * shade}%)`, text: cells.text };
      this._cache.set(key, colour);
    }
    return colour;
  }

  private get _cells(): IThemeCells {
    return this._theme.dark ? this._palette.dark : this._palette.light;
  }

  private _palette: IPalette;
  private _theme: ITheme;
  private _cache = new Map<number, ICellColour>();
}
