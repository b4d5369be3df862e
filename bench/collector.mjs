// Section 7: the collector. Its first slice (validated ingest into SQLite and /api/summary) exists;
// the load test and the 1M / 10M-record query timings come with its rollups and ClickHouse backend.
export const title = 'Collector';

export async function run() {
  return {
    body: 'Not yet measured. The collector\'s first slice (validated ingest into SQLite, `/api/summary` over raw rows) landed on 2026-12-02; records per second at 32 concurrent clients and summary, timeseries and compare latencies over 1 and 10 million records, on SQLite and ClickHouse, are measured once the rollups and the ClickHouse backend exist (issue 5).',
    goals: [],
  };
}
