-- Impressions, and the clicks that come at most a minute after them: the stream-stream join of
-- docs/writing-queries.md ("Stream-stream joins") in SQL. The joined stream's alias (clicks) names
-- its input, as the TypeScript query's { name: 'clicks' } does (`sluice run --input clicks=...`).
SET queryName = ad-clicks;
SELECT *
FROM STREAM read_files('s3://my-bucket/impressions/', format => 'json', schema => 'adId STRING, impressionTime TIMESTAMP') AS impressions
  WATERMARK impressionTime DELAY OF INTERVAL 10 SECONDS
LEFT OUTER JOIN STREAM read_files('s3://my-bucket/clicks/', format => 'json', schema => 'clickAdId STRING, clickTime TIMESTAMP') AS clicks
  WATERMARK clickTime DELAY OF INTERVAL 20 SECONDS
  ON impressions.adId = clicks.clickAdId
  AND impressions.impressionTime BETWEEN clicks.clickTime - INTERVAL 1 MINUTE AND clicks.clickTime
