// Counters and histograms for what every call records (its request, its upstream time, its charge).
// prom-client's own find an observation's series by turning its labels object into a string key,
// validated and joined on every call; these find it through one Map per label, by value, and a
// histogram keeps its buckets' counts in an array. /metrics still comes from prom-client's Registry,
// which formats them as it formats its own (test/http/metric-series.test.ts holds them to that).
import type { Registry } from 'prom-client';

interface SeriesConfig {
  name: string;
  help: string;
  labelNames?: readonly string[];
  registers: Registry[];
}

/** One exported line of a metric, as prom-client's Registry formats it. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

/** Series by label values, one Map level per label; `make` creates a series the first time. */
class SeriesTree<Series> {
  private root!: Map<string, unknown>;
  private single: Series | undefined;
  /** Every series with its labels, in the order they first appeared. */
  all!: { labels: Record<string, string>; series: Series }[];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: () => Series,
  ) {
    this.clear();
  }

  at(values: readonly string[]): Series {
    if (values.length !== this.labelNames.length) {
      throw new Error(`expected ${this.labelNames.length} label values (${this.labelNames.join(', ')}), got ${values.length}`);
    }
    if (values.length === 0) return this.single!;
    let level = this.root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(values[i]!, next);
      }
      level = next;
    }
    const last = values[values.length - 1]!;
    let series = level.get(last) as Series | undefined;
    if (!series) {
      series = this.add(values);
      level.set(last, series);
    }
    return series;
  }

  /** Forgets every series (Registry.resetMetrics); one without labels is there from the start, at zero, as prom-client's is. */
  clear(): void {
    this.root = new Map();
    this.all = [];
    this.single = this.labelNames.length === 0 ? this.add([]) : undefined;
  }

  private add(values: readonly string[]): Series {
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => {
      labels[name] = values[i]!;
    });
    const series = this.make();
    this.all.push({ labels, series });
    return series;
  }
}

/** What both kinds share: a name and help, their series, and what prom-client's Registry reads. */
abstract class CallMetric<Series> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  readonly name: string;
  readonly help: string;
  protected readonly tree: SeriesTree<Series>;

  constructor(config: SeriesConfig, make: () => Series) {
    this.name = config.name;
    this.help = config.help;
    this.tree = new SeriesTree(config.labelNames ?? [], make);
    for (const registry of config.registers) registry.registerMetric(this as never);
  }

  /** Registry.resetMetrics. */
  reset(): void {
    this.tree.clear();
  }

  /** What prom-client's Registry reads to write /metrics. */
  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }

  protected abstract values(): ExportedValue[];
}

/** A counter: `inc(labelValues, amount)`, label values in the order of `labelNames`. */
export class CallCounter extends CallMetric<{ value: number }> {
  readonly type = 'counter';

  constructor(config: SeriesConfig) {
    super(config, () => ({ value: 0 }));
  }

  inc(labelValues: readonly string[], amount = 1): void {
    if (!(amount >= 0) || !Number.isFinite(amount)) throw new Error(`${this.name}: a counter grows by a finite amount of at least 0, not ${amount}`);
    this.tree.at(labelValues).value += amount;
  }

  protected values(): ExportedValue[] {
    return this.tree.all.map(({ labels, series }) => ({ labels, value: series.value }));
  }
}

interface HistogramSeries {
  /** Observations per bucket, not cumulated (the last: above every bound). */
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram: `observe(labelValues, value)`, label values in the order of `labelNames`. */
export class CallHistogram extends CallMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(config: SeriesConfig & { buckets: readonly number[] }) {
    const bounds = [...config.buckets].sort((a, b) => a - b);
    super(config, () => ({ counts: new Array(bounds.length + 1).fill(0), sum: 0, count: 0 }));
    this.bounds = bounds;
  }

  observe(labelValues: readonly string[], value: number): void {
    if (!Number.isFinite(value)) throw new Error(`${this.name}: an observation is a finite number, not ${value}`);
    const series = this.tree.at(labelValues);
    let bucket = 0;
    while (bucket < this.bounds.length && value > this.bounds[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /** Cumulative buckets, +Inf, sum and count per series. */
  protected values(): ExportedValue[] {
    const values: ExportedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, series } of this.tree.all) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: bound }, sharedLabels: labels, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: series.count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: series.count, metricName: `${this.name}_count` });
    }
    return values;
  }
}
