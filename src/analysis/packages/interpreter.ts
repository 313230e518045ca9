import { definePackage } from './define.js';
import type { AnalysisPackage } from './types.js';

export interface InterpreterPackageSpec {
  name: string;
  aliases: string[];
  description: string;
  interpreter: string[];
  /** libmagic's words for the file's kind: a regular expression, matched case-insensitively. */
  fileTypes: string;
  extensions: string[];
}

/** A package that hands the sample to an interpreter, for scripts of one language. */
export function interpreterPackage({ interpreter, ...spec }: InterpreterPackageSpec): AnalysisPackage {
  return definePackage({ ...spec, command: [...interpreter, '{path}', '{arguments}'] });
}
