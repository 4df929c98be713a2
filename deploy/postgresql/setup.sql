-- The cluster plan store's database (docs/OPERATIONS.md "Plan cache and cluster").
-- Run once as a PostgreSQL superuser on the database server:
--   sudo -u postgres psql -v password="'choose-one'" -f deploy/postgresql/setup.sql
-- spmvd creates and migrates its own tables (schema_version, plans, calibrations) the first
-- time a daemon connects, so the role owns the database and needs no other rights.

CREATE ROLE spmvd LOGIN PASSWORD :password;
CREATE DATABASE spmvd OWNER spmvd ENCODING 'UTF8';

-- Nobody else needs to connect to it.
REVOKE ALL ON DATABASE spmvd FROM PUBLIC;
