// Rolling plots of the tick frames (uPlot): one small chart per figure,
// sharing the tick's time (s) as x.

import uPlot from 'uplot';

const WINDOW_S = 20;
const PLOT_HEIGHT = 120;
const STATES = ['free', 'sliding', 'static'];

// Axis labels to three significant figures, however small the values.
const tickLabel = (v) => {
  if (v === 0) return '0';
  const size = Math.abs(v);
  return size < 0.01 || size >= 1e5 ? v.toExponential(1) : String(Number(v.toPrecision(3)));
};
// The smallest of 1, 2, 2.5 and 5 times a power of ten at or above x > 0.
const niceCeil = (x) => {
  const power = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((v) => v >= x);
};
const magnitude = (v) => (v ? Math.hypot(v[0], v[1], v[2]) : null);
const stateValue = (state) => {
  const i = STATES.indexOf(state);
  return i < 0 ? null : i;
};

// Each chart: its title, and its series with the value each takes from a tick.
const CHARTS = [
  {
    title: 'Force (N)',
    series: [
      { label: '|F| written', stroke: '#e8b04a', value: (t) => magnitude(t.force_n) },
      { label: '|F| rendered', stroke: '#7cc4ff', value: (t) => magnitude(t.rendered_force_n), dash: [4, 3] },
    ],
  },
  {
    title: 'Torque (N·m)',
    series: [
      { label: '|τ| written', stroke: '#e8b04a', value: (t) => magnitude(t.torque_n_m) },
      { label: '|τ| rendered', stroke: '#7cc4ff', value: (t) => magnitude(t.rendered_torque_n_m), dash: [4, 3] },
    ],
  },
  {
    title: 'Contacts',
    series: [{ label: 'contacts', stroke: '#c792ea', value: (t) => t.contacts }],
  },
  {
    title: 'Friction state',
    states: true,
    series: [{ label: 'state', stroke: '#2fd46a', value: (t) => stateValue(t.state) }],
  },
  {
    title: 'Tick timing (µs)',
    series: [
      { label: 'compute', stroke: '#ff8f5a', value: (t) => t.compute_us },
      { label: 'wake-up latency', stroke: '#5ad1c8', value: (t) => t.wake_latency_us },
    ],
  },
  {
    title: 'Passivity observer (J)',
    series: [
      { label: 'force port', stroke: '#e8b04a', value: (t) => t.passivity_energy_j },
      { label: 'torque port', stroke: '#7cc4ff', value: (t) => t.passivity_rotational_energy_j, dash: [4, 3] },
    ],
  },
  {
    title: 'Passivity damping (N·s/m, N·m·s/rad)',
    series: [
      { label: 'force port', stroke: '#ff8f5a', value: (t) => t.passivity_damping_n_s_per_m },
      { label: 'torque port', stroke: '#c792ea', value: (t) => t.passivity_rotational_damping_n_m_s_per_rad, dash: [4, 3] },
    ],
  },
  {
    title: 'Deadline misses',
    series: [{ label: 'misses', stroke: '#ff5370', value: (t) => t.deadline_misses }],
  },
];

export class Plots {
  constructor(container) {
    this.container = container;
    this.columns = [[], ...CHARTS.flatMap((c) => c.series.map(() => []))];
    this.charts = CHARTS.map((chart) => this.makeChart(chart));
    this.redrawQueued = false;
    new ResizeObserver(() => this.resize()).observe(container);
  }

  makeChart(chart) {
    const cell = document.createElement('div');
    cell.className = 'plot';
    this.container.appendChild(cell);
    // Magnitudes and counts from 0 up to a round number, so that a constant
    // reads as its value and the top of the axis is labelled.
    const yScale = chart.states
      ? { range: [-0.3, STATES.length - 0.7] }
      : { range: (_, min, max) => [Math.min(0, min), max > 0 ? niceCeil(1.05 * max) : 1] };
    const options = {
      title: chart.title,
      width: 300,
      height: PLOT_HEIGHT,
      legend: { live: false },
      cursor: { show: false },
      scales: { x: { time: false }, y: yScale },
      axes: [
        { stroke: '#9aa5b1', grid: { stroke: '#2a3038' }, ticks: { stroke: '#2a3038' } },
        {
          stroke: '#9aa5b1',
          grid: { stroke: '#2a3038' },
          ticks: { stroke: '#2a3038' },
          size: 56,
          ...(chart.states ? {
            splits: () => STATES.map((_, i) => i),
            values: (_, splits) => splits.map((v) => STATES[v] ?? ''),
          } : {
            values: (_, splits) => splits.map(tickLabel),
          }),
        },
      ],
      series: [
        { label: 't (s)' },
        ...chart.series.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          width: 1.5,
          dash: s.dash,
          points: { show: false },
          ...(chart.states ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}),
        })),
      ],
    };
    return { cell, plot: new uPlot(options, [[], ...chart.series.map(() => [])], cell) };
  }

  resize() {
    for (const { cell, plot } of this.charts) {
      const width = cell.clientWidth;
      if (width > 0) plot.setSize({ width, height: PLOT_HEIGHT });
    }
  }

  /** Appends one tick frame and drops what has left the window. */
  push(tick) {
    const [time, ...values] = this.columns;
    time.push(tick.time_s);
    let column = 0;
    for (const chart of CHARTS) {
      for (const series of chart.series) values[column++].push(series.value(tick) ?? null);
    }
    let drop = 0;
    while (drop < time.length && time[drop] < tick.time_s - WINDOW_S) drop++;
    if (drop > 0) for (const c of this.columns) c.splice(0, drop);
    if (!this.redrawQueued) {
      this.redrawQueued = true;
      requestAnimationFrame(() => this.redraw());
    }
  }

  redraw() {
    this.redrawQueued = false;
    const [time, ...values] = this.columns;
    let column = 0;
    this.charts.forEach(({ plot }, i) => {
      const data = [time.slice()];
      for (let s = 0; s < CHARTS[i].series.length; s++) data.push(values[column++].slice());
      plot.setData(data);
    });
  }

  /** Empties the plots, for a new scene: its time starts again at 0. */
  clear() {
    for (const c of this.columns) c.length = 0;
    this.redraw();
  }

  /** What the charts hold: points per chart and the last x, from uPlot's own data. */
  census() {
    const x = this.charts.map(({ plot }) => plot.data[0]);
    return {
      charts: this.charts.length,
      points: Math.min(...x.map((d) => d.length)),
      lastX: x[0].length ? x[0][x[0].length - 1] : null,
    };
  }
}
