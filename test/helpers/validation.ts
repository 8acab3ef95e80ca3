/**
 * The findings of aws-cdk-lib's synth-time template validation (the CloudFormationValidatePlugin,
 * a WebAssembly engine run on every synth unless `builtinCloudFormationValidation: false` or
 * CDK_VALIDATION=false), read from the report it writes into the cloud assembly.
 *
 * Why the report: the findings never reach Annotations (Annotations.fromStack(...).findWarning sees
 * none of them), and synth does not throw on them. Without the context key
 * `@aws-cdk/core:validateAgainstDefaultRules` every engine error (a property the resource type does
 * not have, F3002; a retired runtime, E2533) is downgraded to a warning; with it, errors fail synth
 * but best-practice warnings (an unused parameter, W2001) still do not (only
 * `@aws-cdk/core:strictCfnValidateErrors` makes them). Either way each finding is printed to stderr
 * and written to `validation-report.json` in the assembly directory, the one place a test can read
 * all of them. (The README's `policy-validation-report.json` is the legacy format, written only with
 * `@aws-cdk/core:validationReportJson`.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Stage, type Stack } from 'aws-cdk-lib';

/** The parts of validation-report.json read here (aws-cdk-lib 2.276). */
interface ValidationReport {
  readonly pluginReports: Array<{
    readonly pluginName: string;
    readonly conclusion: string;
    readonly metadata?: { error?: string };
    readonly violations: Array<{
      readonly ruleName: string;
      readonly severity: string;
      readonly description: string;
      readonly violatingConstructs: Array<{ constructPath: string }>;
    }>;
  }>;
}

/**
 * Every finding of the template validation of the app that holds `stack` (synthesizing it, if no
 * Template.fromStack has), as "plugin rule (severity) at construct paths: description" lines, each
 * severity included (the engine reports warnings and errors); a plugin that failed to run is a line
 * too. None when the templates pass. Throws when the synth wrote no report, that is when no
 * validation ran, so that a check of "no findings" cannot pass because nothing was checked.
 */
export function validationFindings(stack: Stack): string[] {
  const stage = Stage.of(stack);
  if (!stage) throw new Error(`stack ${stack.node.path} is in no App`);
  const file = path.join(stage.synth().directory, 'validation-report.json');
  if (!fs.existsSync(file)) {
    throw new Error(`no ${file}: the template validation did not run (new App({ builtinCloudFormationValidation: true }), and CDK_VALIDATION not "false")`);
  }
  const report = JSON.parse(fs.readFileSync(file, 'utf8')) as ValidationReport;
  return report.pluginReports.flatMap((plugin) => [
    ...(plugin.conclusion === 'failure' && plugin.violations.length === 0
      ? [`${plugin.pluginName} failed: ${plugin.metadata?.error ?? 'no reason given'}`]
      : []),
    ...plugin.violations.map(
      (v) => `${plugin.pluginName} ${v.ruleName} (${v.severity}) at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}: ${v.description}`,
    ),
  ]);
}
