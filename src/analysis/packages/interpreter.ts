import { splitArguments } from './arguments.js';
import type { AnalysisPackage, PackageTarget } from './types.js';

export interface InterpreterPackageSpec {
  name: string;
  aliases: string[];
  description: string;
  interpreter: string[];
  /** Words of libmagic's description that mark the file's kind (matched case-insensitively). */
  typeWords: RegExp;
  extensions: string[];
}

/** A package that hands the sample to an interpreter, for scripts of one language. */
export function interpreterPackage(spec: InterpreterPackageSpec): AnalysisPackage {
  return {
    name: spec.name,
    aliases: spec.aliases,
    description: spec.description,
    matches: (target: PackageTarget) =>
      spec.typeWords.test(target.fileType) || spec.extensions.some((extension) => target.fileName.toLowerCase().endsWith(extension)),
    command: ({ path, options }) => [...spec.interpreter, path, ...splitArguments(options.arguments)],
  };
}
