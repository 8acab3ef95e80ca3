-- A stateless query: the events with a positive amount, one row per tag, the amount in cents.
-- No aggregation, so no state and no watermark: each batch's rows go out as they are.
SET queryName = clean-events;
SET maxFilesPerTrigger = 5;
SELECT user, event_time, CAST(amount * 100 AS BIGINT) AS cents, explode(tags) AS tag
FROM STREAM read_files(format => 'json', schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE, tags ARRAY<STRING>')
WHERE amount > 0 AND user IS NOT NULL
