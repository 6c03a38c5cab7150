-- The topology a run measured, in intpath_core's JSON: a diagnosis reads
-- the run without the file it was collected with, and refuses a topology
-- that is not this one. NULL for runs recorded before.
ALTER TABLE runs ADD COLUMN topology_json TEXT;
