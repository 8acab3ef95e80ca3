-- The windowed-totals query in SQL: per 10-minute window of event time, the sum of `amount` and
-- the number of events, with a 10-minute watermark. In append mode a window is written once, when
-- the watermark passes its end; `SET outputMode = update;` writes every window a run changed.
--
-- What it reads: {{SOURCE_TEXT}} (the columns of the schema below).
-- Where it reads: {{READ_NOTE_SQL}} Deployed, the construct gives the Lambda its source
-- (SLUICE_SOURCE_URI), which takes precedence, so the same query runs locally and deployed.
-- The statement's forms: sluice's docs/sql.md.
SET outputMode = append;
SET queryName = {{NAME}};
SET {{LIMIT_OPTION}} = 1000;
{{SQL_WINDOW_NOTE}}SELECT {{SQL_WINDOW}}, sum(amount) AS total, count(*) AS events
FROM STREAM {{SQL_SOURCE}}
  WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
GROUP BY window(event_time, '10 minutes')
