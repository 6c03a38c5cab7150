-- Which raw probe rows a run kept (`collect --store`): 'raw' (every probe
-- with its hop records), 'buckets' (none: only link_buckets, path_buckets
-- and path_stats) or 'sampled:N' (probes 0, N, 2N, ... of each path in
-- arrival order). Buckets are complete in every mode; readers that need hop
-- records check this column instead of mistaking a missing row for a quiet
-- network. Runs from before the column kept everything.
ALTER TABLE runs ADD COLUMN store_mode TEXT NOT NULL DEFAULT 'raw';
