-- The windowed-totals example of reference/000 in SQL (examples/windowed-totals.ts is the same
-- query in TypeScript): a 10-minute tumbling-window sum and count of `amount`, with a 10-minute
-- watermark on `event_time`. The source path is left to the runtime (the CLI's --source, the
-- Lambda's configuration), as the TypeScript example's .load() leaves it.
SET outputMode = append;
SET queryName = windowed-totals-append;
SELECT window(event_time, '10 minutes') AS window, sum(amount) AS total, count(*) AS events
FROM STREAM read_files(format => 'json', schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE')
  WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
GROUP BY window(event_time, '10 minutes')
