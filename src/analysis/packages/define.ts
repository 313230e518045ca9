import { splitArguments } from './arguments.js';
import type { AnalysisPackage, CommandTemplate, PackageContext, PackageSpec, PackageTarget } from './types.js';

/** Gives a package spec its behaviour on the host; `guest/analyzer/packages.py` is its twin in the guest. */
export function definePackage(spec: PackageSpec): AnalysisPackage {
  const fileTypes = spec.fileTypes ? new RegExp(spec.fileTypes, 'i') : null;
  const unpack = spec.unpack;
  return {
    spec,
    name: spec.name,
    aliases: spec.aliases,
    description: spec.description,
    ...(spec.needsDisplay ? { needsDisplay: true } : {}),
    matches: (target: PackageTarget) =>
      Boolean(fileTypes?.test(target.fileType)) || (spec.extensions ?? []).some((ending) => target.fileName.toLowerCase().endsWith(ending)),
    command: (context) => {
      if (!spec.command) throw new Error(`the ${spec.name} package runs the unpacked file with that file’s own package`);
      return expandTemplate(spec.command, context);
    },
    fallbackCommand: (context) => (spec.fallback ? expandTemplate(spec.fallback, context) : undefined),
    ...(unpack ? { unpack: (context: PackageContext, into = unpack.into) => ({ argv: expandTemplate(unpack.command, context, into), into }) } : {}),
  };
}

/** The command line a template stands for in this context (see CommandTemplate). */
export function expandTemplate(template: CommandTemplate, context: PackageContext, into = ''): string[] {
  return template.flatMap((word) => {
    switch (word) {
      case '{path}':
        return [context.path];
      case '{url}':
        return [context.url];
      case '{into}':
        return [into];
      case '{arguments}':
        return splitArguments(context.options.arguments);
      case '{passwords}':
        return passwordsToTry(context);
      default:
        return [word];
    }
  });
}

/** The task's password alone when it gives one, else no password and then each configured one. */
export function passwordsToTry({ options, passwords }: Pick<PackageContext, 'options' | 'passwords'>): string[] {
  return options.password !== undefined ? [options.password] : ['', ...passwords];
}
