// The graph view's colours: the theme's variables (read by the page, which has its styles), read again when the theme
// changes; each kept legible on the background.
import type { ShownState } from '../src/graphPage';
import type { Context } from './graphState';

/** A colour must stand out from the background by this contrast ratio, or the foreground is used instead. */
const MIN_CONTRAST = 3;

export type Palette = ReturnType<typeof paletteOf>;

/** The red, green, blue of any CSS colour, through a canvas's parser; undefined for one it cannot read. */
export function rgbOf(parser: Context, colour: string): [number, number, number] | undefined {
  parser.fillStyle = '#000001';
  parser.fillStyle = colour;
  const parsed = String(parser.fillStyle);
  if (parsed === '#000001' && colour.trim() !== '#000001') return undefined;
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(parsed);
  if (hex !== null) return [1, 2, 3].map((i) => parseInt(hex[i]!, 16)) as [number, number, number];
  const rgba = /rgba?\((\d+), (\d+), (\d+)/.exec(parsed);
  return rgba === null ? undefined : ([1, 2, 3].map((i) => Number(rgba[i])) as [number, number, number]);
}

/** How much of the foreground an edge's colour has, the rest the background's. */
const EDGE_STRENGTH = 0.3;

/** `share` of `colour` and the rest of `base`, as a CSS colour. */
function mixed(colour: readonly number[], base: readonly number[], share: number): string {
  const channel = (i: number): number => Math.round(share * colour[i]! + (1 - share) * base[i]!);
  return `rgb(${channel(0)}, ${channel(1)}, ${channel(2)})`;
}

function luminance([r, g, b]: [number, number, number]): number {
  const linear = (c: number): number => (c <= 10 ? c / 3295 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The colours, from the theme's variables (read by the page, which has its styles), each kept legible. */
export function paletteOf(variable: (name: string, fallback: string) => string, parser: Context) {
  const background = variable('--vscode-editor-background', '#ffffff');
  const foreground = variable('--vscode-foreground', '#333333');
  const backgroundRgb = rgbOf(parser, background) ?? [255, 255, 255];
  const foregroundRgb = rgbOf(parser, foreground) ?? [128, 128, 128];
  /** A colour for lines and outlines, the foreground when it would not stand out from the background. */
  const legible = (name: string, fallback: string): string => {
    const colour = variable(name, fallback);
    const rgb = rgbOf(parser, colour);
    if (rgb === undefined) return foreground;
    const [lighter, darker] = [luminance(rgb), luminance(backgroundRgb)].sort((a, b) => b - a) as [number, number];
    return (lighter + 0.05) / (darker + 0.05) >= MIN_CONTRAST ? colour : foreground;
  };
  return {
    background,
    foreground,
    /**
     * Edges: the foreground faded towards the background, opaque (in one stroke, hundreds of edges overlapping in a
     * gap stay this light: a translucent colour would not either, but a dark one turned a zoomed-in gap into a band).
     */
    edge: mixed(foregroundRgb, backgroundRgb, EDGE_STRENGTH),
    /** The workbench's font, for text drawn on the canvas. */
    font: variable('--vscode-font-family', 'sans-serif'),
    description: variable('--vscode-descriptionForeground', foreground),
    box: variable('--vscode-editorWidget-background', background),
    border: variable('--vscode-editorWidget-border', variable('--vscode-contrastBorder', foreground)),
    hover: variable('--vscode-list-hoverBackground', background),
    current: variable('--vscode-editor-selectionBackground', background),
    focus: legible('--vscode-focusBorder', foreground),
    cycle: legible('--vscode-errorForeground', '#e51400'),
    warning: legible('--vscode-editorWarning-foreground', '#bf8803'),
    // A hue no state, cycle, warning or focus uses, legible on the light, dark and high-contrast themes' backgrounds.
    critical: legible('--vscode-terminal-ansiMagenta', '#bc05bc'),
    viewport: variable('--vscode-scrollbarSlider-activeBackground', foreground),
    states: {
      pending: legible('--vscode-disabledForeground', foreground),
      running: legible('--vscode-charts-blue', '#1a85ff'),
      completed: legible('--vscode-charts-green', '#388a34'),
      // Completed too: told from a task that ran by its glyph and its dotted outline (graphPainting.ts).
      cached: legible('--vscode-charts-green', '#388a34'),
      failed: legible('--vscode-charts-red', '#e51400'),
      cancelled: legible('--vscode-charts-purple', '#652d90'),
    } satisfies Record<ShownState, string>,
  };
}
