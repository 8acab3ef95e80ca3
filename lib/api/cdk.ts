/**
 * `sluice/cdk`: the CDK side. Needs the peer dependencies aws-cdk-lib (2.x) and constructs (10.x).
 *
 *   import { AvailableNowPipeline, PipelineSource, PipelineSink } from 'sluice/cdk';
 *   new AvailableNowPipeline(this, 'Totals', { entry: 'src/handler.ts', source: PipelineSource.s3(), sink: PipelineSink.s3() });
 */
export * from '../infra/available-now-pipeline';
// Types the exports above name in their signatures, exported so the API reference (npm run docs) documents them.
export type { OutputColumnType } from '../engine/ports/sink';
export type { DataType } from '../engine/schema';
export type { ScaleOutInputs } from '../infra/scale-out';
