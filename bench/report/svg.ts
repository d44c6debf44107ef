// Hand-written SVG charts for docs/benchmarks.md, with no dependencies: grouped bars (counts out
// of a total), median-and-range marks on a logarithmic or linear axis, and lines through points.
// Every chart carries its title and a caption line (what machine, when) inside the image, so a
// copied image still says where its numbers come from.

export interface Series {
  readonly label: string;
  readonly color: string;
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const n = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(1));

class Canvas {
  private readonly parts: string[] = [];

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  }

  rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): void {
    this.parts.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(Math.max(0, w))}" height="${n(Math.max(0, h))}" fill="${fill}" ${extra}/>`);
  }

  line(x1: number, y1: number, x2: number, y2: number, stroke: string, width = 1, extra = ''): void {
    this.parts.push(`<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}" stroke-width="${width}" ${extra}/>`);
  }

  text(x: number, y: number, content: string, options: { size?: number; anchor?: 'start' | 'middle' | 'end'; color?: string; weight?: string; rotate?: number } = {}): void {
    const transform = options.rotate === undefined ? '' : ` transform="rotate(${options.rotate} ${n(x)} ${n(y)})"`;
    this.parts.push(
      `<text x="${n(x)}" y="${n(y)}" ${FONT} font-size="${options.size ?? 12}" text-anchor="${options.anchor ?? 'start'}" fill="${options.color ?? '#222'}"${options.weight === undefined ? '' : ` font-weight="${options.weight}"`}${transform}>${escapeXml(content)}</text>`,
    );
  }

  polyline(points: readonly (readonly [number, number])[], stroke: string, width = 2, dashed = false): void {
    const d = points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ');
    this.parts.push(`<polyline points="${d}" fill="none" stroke="${stroke}" stroke-width="${width}"${dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
  }

  circle(x: number, y: number, r: number, fill: string): void {
    this.parts.push(`<circle cx="${n(x)}" cy="${n(y)}" r="${r}" fill="${fill}"/>`);
  }

  toString(): string {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${this.width}" height="${this.height}" viewBox="0 0 ${this.width} ${this.height}">\n${this.parts.join('\n')}\n</svg>\n`;
  }
}

interface Frame {
  readonly canvas: Canvas;
  readonly left: number;
  readonly top: number;
  readonly plotWidth: number;
  readonly plotHeight: number;
}

// Title, caption and legend around a plot area.
function frame(width: number, height: number, title: string, caption: string, series: readonly Series[], margins: { left: number; bottom: number }): Frame {
  const canvas = new Canvas(width, height);
  canvas.text(width / 2, 24, title, { size: 16, anchor: 'middle', weight: '600' });
  // A caption too long for one line breaks at its last "; " that fits.
  const fits = Math.floor((width - 20) / 6.2);
  const lines: string[] = [];
  let rest = caption;
  while (rest.length > fits) {
    const cut = rest.lastIndexOf('; ', fits);
    if (cut <= 0) break;
    lines.push(rest.slice(0, cut + 1));
    rest = rest.slice(cut + 2);
  }
  lines.push(rest);
  lines.forEach((line, i) => canvas.text(width / 2, height - 10 - 14 * (lines.length - 1 - i), line, { size: 11, anchor: 'middle', color: '#555' }));
  // Legend: one row (or two) under the title.
  let x = margins.left;
  let y = 48;
  for (const s of series) {
    const w = 22 + s.label.length * 6.6;
    if (x + w > width - 20) {
      x = margins.left;
      y += 18;
    }
    canvas.rect(x, y - 10, 12, 12, s.color);
    canvas.text(x + 16, y, s.label, { size: 12 });
    x += w + 14;
  }
  const top = y + 22;
  // Each extra caption line takes room from the plot, not from the axis labels.
  const captionExtra = 14 * (lines.length - 1);
  return { canvas, left: margins.left, top, plotWidth: width - margins.left - 20, plotHeight: height - top - margins.bottom - captionExtra };
}

function yAxis(f: Frame, ticks: readonly { value: number; label: string }[], toY: (v: number) => number, label: string): void {
  const { canvas, left, top, plotWidth, plotHeight } = f;
  for (const tick of ticks) {
    const y = toY(tick.value);
    canvas.line(left, y, left + plotWidth, y, '#e4e4e4');
    canvas.text(left - 6, y + 4, tick.label, { size: 11, anchor: 'end', color: '#444' });
  }
  canvas.line(left, top, left, top + plotHeight, '#888');
  canvas.line(left, top + plotHeight, left + plotWidth, top + plotHeight, '#888');
  canvas.text(16, top + plotHeight / 2, label, { size: 12, anchor: 'middle', rotate: -90 });
}

export interface GroupLabel {
  readonly label: string;
  /** A second line under the label (e.g. the rate actually achieved). */
  readonly sublabel?: string;
}

function groupLabels(f: Frame, groups: readonly GroupLabel[], groupWidth: number): void {
  groups.forEach((g, i) => {
    const x = f.left + groupWidth * (i + 0.5);
    f.canvas.text(x, f.top + f.plotHeight + 18, g.label, { size: 12, anchor: 'middle' });
    if (g.sublabel !== undefined) f.canvas.text(x, f.top + f.plotHeight + 33, g.sublabel, { size: 10.5, anchor: 'middle', color: '#555' });
  });
}

/** Bars of counts (e.g. runs evicted in time) per group and series, against a fixed maximum. */
export function groupedBarChart(options: {
  readonly title: string;
  readonly caption: string;
  readonly yLabel: string;
  readonly groups: readonly GroupLabel[];
  readonly series: readonly Series[];
  /** values[group][series]; null draws nothing (not measured). */
  readonly values: readonly (readonly (number | null)[])[];
  readonly yMax: number;
  readonly width?: number;
  readonly height?: number;
}): string {
  const f = frame(options.width ?? 1000, options.height ?? 460, options.title, options.caption, options.series, { left: 64, bottom: 70 });
  const toY = (v: number): number => f.top + f.plotHeight * (1 - v / options.yMax);
  const step = options.yMax <= 5 ? 1 : options.yMax <= 20 ? 5 : Math.ceil(options.yMax / 5);
  const ticks = [];
  for (let v = 0; v <= options.yMax; v += step) ticks.push({ value: v, label: String(v) });
  yAxis(f, ticks, toY, options.yLabel);
  const groupWidth = f.plotWidth / options.groups.length;
  const barWidth = (groupWidth * 0.8) / options.series.length;
  options.values.forEach((row, g) => {
    row.forEach((value, s) => {
      if (value === null) return;
      const x = f.left + groupWidth * g + groupWidth * 0.1 + barWidth * s;
      const color = options.series[s]?.color ?? '#999';
      // A zero still shows as a thin mark, so "none in time" differs from "not run".
      f.canvas.rect(x + 1, toY(value), barWidth - 2, Math.max(1.5, toY(0) - toY(value)), color);
    });
  });
  groupLabels(f, options.groups, groupWidth);
  return f.canvas.toString();
}

export interface RangeMark {
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

/** A dot at the median and a bar from low to high, per group and series, on a log or linear axis. */
export function rangeChart(options: {
  readonly title: string;
  readonly caption: string;
  readonly yLabel: string;
  readonly groups: readonly GroupLabel[];
  readonly series: readonly Series[];
  readonly values: readonly (readonly (RangeMark | null)[])[];
  readonly yMin: number;
  readonly yMax: number;
  readonly log: boolean;
  /** A horizontal reference line (a target), with its label. */
  readonly reference?: { readonly value: number; readonly label: string };
  readonly width?: number;
  readonly height?: number;
}): string {
  const f = frame(options.width ?? 1000, options.height ?? 480, options.title, options.caption, options.series, { left: 64, bottom: 70 });
  const clamp = (v: number): number => Math.min(options.yMax, Math.max(options.yMin, v));
  const toY = options.log
    ? (v: number): number => f.top + f.plotHeight * (1 - (Math.log10(clamp(v)) - Math.log10(options.yMin)) / (Math.log10(options.yMax) - Math.log10(options.yMin)))
    : (v: number): number => f.top + f.plotHeight * (1 - (clamp(v) - options.yMin) / (options.yMax - options.yMin));
  const ticks: { value: number; label: string }[] = [];
  if (options.log) {
    for (let v = options.yMin; v <= options.yMax * 1.0001; v *= 10) {
      for (const m of [1, 2, 5]) if (v * m <= options.yMax * 1.0001) ticks.push({ value: v * m, label: String(Number((v * m).toPrecision(3))) });
    }
  } else {
    const span = options.yMax - options.yMin;
    const raw = span / 6;
    const magnitude = 10 ** Math.floor(Math.log10(raw));
    const tickStep = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
    for (let v = options.yMin; v <= options.yMax + 1e-9; v += tickStep) ticks.push({ value: v, label: String(Number(v.toPrecision(3))) });
  }
  yAxis(f, ticks, toY, options.yLabel);
  if (options.reference !== undefined) {
    const y = toY(options.reference.value);
    f.canvas.line(f.left, y, f.left + f.plotWidth, y, '#c00', 1.5, 'stroke-dasharray="5 4"');
    f.canvas.text(f.left + f.plotWidth - 4, y - 5, options.reference.label, { size: 11, anchor: 'end', color: '#c00' });
  }
  const groupWidth = f.plotWidth / options.groups.length;
  const slot = (groupWidth * 0.8) / options.series.length;
  options.values.forEach((row, g) => {
    row.forEach((mark, s) => {
      if (mark === null) return;
      const x = f.left + groupWidth * g + groupWidth * 0.1 + slot * (s + 0.5);
      const color = options.series[s]?.color ?? '#999';
      f.canvas.line(x, toY(mark.low), x, toY(mark.high), color, 2.5);
      f.canvas.line(x - 4, toY(mark.high), x + 4, toY(mark.high), color, 2);
      f.canvas.circle(x, toY(mark.median), 4.5, color);
    });
  });
  groupLabels(f, options.groups, groupWidth);
  return f.canvas.toString();
}

export interface LineSeries extends Series {
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

/** Lines through (x, y) points on linear axes from 0. */
export function lineChart(options: {
  readonly title: string;
  readonly caption: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
  readonly xMax: number;
  readonly yMax: number;
  readonly xTicks: readonly number[];
  readonly reference?: { readonly points: readonly (readonly [number, number])[]; readonly label: string };
  readonly width?: number;
  readonly height?: number;
}): string {
  const f = frame(options.width ?? 800, options.height ?? 440, options.title, options.caption, options.series, { left: 64, bottom: 62 });
  const toX = (v: number): number => f.left + f.plotWidth * (v / options.xMax);
  const toY = (v: number): number => f.top + f.plotHeight * (1 - Math.min(v, options.yMax) / options.yMax);
  const raw = options.yMax / 6;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const tickStep = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks = [];
  for (let v = 0; v <= options.yMax + 1e-9; v += tickStep) ticks.push({ value: v, label: String(Number(v.toPrecision(3))) });
  yAxis(f, ticks, toY, options.yLabel);
  for (const x of options.xTicks) {
    f.canvas.line(toX(x), f.top + f.plotHeight, toX(x), f.top + f.plotHeight + 5, '#888');
    f.canvas.text(toX(x), f.top + f.plotHeight + 19, String(x), { size: 11, anchor: 'middle', color: '#444' });
  }
  f.canvas.text(f.left + f.plotWidth / 2, f.top + f.plotHeight + 38, options.xLabel, { size: 12, anchor: 'middle' });
  if (options.reference !== undefined) {
    f.canvas.polyline(options.reference.points.map(([x, y]) => [toX(x), toY(y)] as const), '#c00', 1.5, true);
    const last = options.reference.points.at(-1);
    if (last !== undefined) f.canvas.text(toX(last[0]) - 4, toY(last[1]) - 6, options.reference.label, { size: 11, anchor: 'end', color: '#c00' });
  }
  for (const s of options.series) {
    const points = s.points.map(([x, y]) => [toX(x), toY(y)] as const);
    f.canvas.polyline(points, s.color, 2.5, s.dashed === true);
    for (const [x, y] of points) f.canvas.circle(x, y, 3.5, s.color);
  }
  return f.canvas.toString();
}
