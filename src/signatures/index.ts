import { join } from 'node:path';
import { EVENTS_FILE } from '../report/events.js';
import { foldOne } from '../report/event-log.js';
import { behaviorStreams } from '../report/behavior-streams.js';
import type { Report, SignatureMatch } from '../report/report-types.js';
import type { AnalysisPaths } from '../storage/layout.js';
import { SignatureRun } from './engine.js';
import { AccountCreatedCommand } from './linux/account-created-command.js';
import { AccountPasswdModified } from './linux/account-passwd-modified.js';
import { AntidebugPtraceTraceme } from './linux/antidebug-ptrace-traceme.js';
import { AntisandboxContainerCheck } from './linux/antisandbox-container-check.js';
import { AntivmDmi } from './linux/antivm-dmi.js';
import { AntivmHypervisorCheck } from './linux/antivm-hypervisor-check.js';
import { Argv0Spoofing } from './linux/argv0-spoofing.js';
import { BindShell } from './linux/bind-shell.js';
import { C2Beaconing } from './linux/c2-beaconing.js';
import { ChattrImmutable } from './linux/chattr-immutable.js';
import { CredentialBrowser } from './linux/credential-browser.js';
import { CredentialCloudConfig } from './linux/credential-cloud-config.js';
import { CredentialShadow } from './linux/credential-shadow.js';
import { CredentialSshKeys } from './linux/credential-ssh-keys.js';
import { CryptoWalletAccess } from './linux/crypto-wallet-access.js';
import { Daemonize } from './linux/daemonize.js';
import { DgaDomains } from './linux/dga-domains.js';
import { DisableSelinuxApparmor } from './linux/disable-selinux-apparmor.js';
import { DnsTxtQuery } from './linux/dns-txt-query.js';
import { DownloadAndExecute } from './linux/download-and-execute.js';
import { EicarTestFile } from './linux/eicar-test-file.js';
import { ExecutableDroppedTmp } from './linux/executable-dropped-tmp.js';
import { FilelessMemfdExec } from './linux/fileless-memfd-exec.js';
import { FirewallTampering } from './linux/firewall-tampering.js';
import { HiddenFileCreated } from './linux/hidden-file-created.js';
import { HistoryClearing } from './linux/history-clearing.js';
import { HttpBeaconing } from './linux/http-beaconing.js';
import { HttpRawIp } from './linux/http-raw-ip.js';
import { IrcTraffic } from './linux/irc-traffic.js';
import { KernelModuleLoad } from './linux/kernel-module-load.js';
import { KillSecurityTools } from './linux/kill-security-tools.js';
import { LogWiping } from './linux/log-wiping.js';
import { LongSleep } from './linux/long-sleep.js';
import { MassFileModification } from './linux/mass-file-modification.js';
import { MassFileRename } from './linux/mass-file-rename.js';
import { MinerPool } from './linux/miner-pool.js';
import { MinerStratum } from './linux/miner-stratum.js';
import { NetworkDiscovery } from './linux/network-discovery.js';
import { NetworkScanning } from './linux/network-scanning.js';
import { OutboundSmtp } from './linux/outbound-smtp.js';
import { PackedBinary } from './linux/packed-binary.js';
import { PersistenceCron } from './linux/persistence-cron.js';
import { PersistenceCrontabCommand } from './linux/persistence-crontab-command.js';
import { PersistenceRcScripts } from './linux/persistence-rc-scripts.js';
import { PersistenceShellProfile } from './linux/persistence-shell-profile.js';
import { PersistenceSshAuthorizedKeys } from './linux/persistence-ssh-authorized-keys.js';
import { PersistenceSystemd } from './linux/persistence-systemd.js';
import { PersistenceXdgAutostart } from './linux/persistence-xdg-autostart.js';
import { PipeToShell } from './linux/pipe-to-shell.js';
import { PrivescSetuidRoot } from './linux/privesc-setuid-root.js';
import { ProcMemDump } from './linux/proc-mem-dump.js';
import { ProcessDiscovery } from './linux/process-discovery.js';
import { ProcessInjectionPtrace } from './linux/process-injection-ptrace.js';
import { ProcessRenameMasquerade } from './linux/process-rename-masquerade.js';
import { RansomwareNote } from './linux/ransomware-note.js';
import { RawTcpProtocol } from './linux/raw-tcp-protocol.js';
import { ReverseShellCommandLine } from './linux/reverse-shell-command-line.js';
import { ReverseShell } from './linux/reverse-shell.js';
import { RootkitLdPreload } from './linux/rootkit-ld-preload.js';
import { SelfDeletion } from './linux/self-deletion.js';
import { SleepEvasion } from './linux/sleep-evasion.js';
import { StaticAntidebug } from './static/static-antidebug.js';
import { StaticCapabilityCombination } from './static/static-capability-combination.js';
import { StaticCryptoConstants } from './static/static-crypto-constants.js';
import { StaticElfInjection } from './static/static-elf-injection.js';
import { StaticKeylogger } from './static/static-keylogger.js';
import { StaticNetworkApis } from './static/static-network-apis.js';
import { StaticPeInjection } from './static/static-pe-injection.js';
import { StaticPersistence } from './static/static-persistence.js';
import { SudoersModified } from './linux/sudoers-modified.js';
import { SuidBitSet } from './linux/suid-bit-set.js';
import { SysctlSecurityTamper } from './linux/sysctl-security-tamper.js';
import { SystemBinaryModified } from './linux/system-binary-modified.js';
import { SystemInfoDiscovery } from './linux/system-info-discovery.js';
import { Timestomp } from './linux/timestomp.js';
import { TorUsage } from './linux/tor-usage.js';
import { UserDiscovery } from './linux/user-discovery.js';
import { WinAntidebug } from './windows/win-antidebug.js';
import { WinAntivm } from './windows/win-antivm.js';
import { WinDisableSecurityTools } from './windows/win-disable-security-tools.js';
import { WinDownloadAndExecute } from './windows/win-download-and-execute.js';
import { WinFirewallDisabled } from './windows/win-firewall-disabled.js';
import { WinKeylogger } from './windows/win-keylogger.js';
import { WinPersistenceRunKey } from './windows/win-persistence-run-key.js';
import { WinPersistenceService } from './windows/win-persistence-service.js';
import { WinProcessInjection } from './windows/win-process-injection.js';
import { WinRansomwareFileRenames } from './windows/win-ransomware-file-renames.js';
import { WinShadowCopyDeletion } from './windows/win-shadow-copy-deletion.js';
import { WinWineDetection } from './windows/win-wine-detection.js';
import type { SignatureClass } from './signature.js';

export { scoreOf } from './score.js';
export type { Severity, SignatureInfo } from './signature.js';

/** Every signature nestbox ships, run on every analysis. */
export const SIGNATURES: readonly SignatureClass[] = [
  AccountCreatedCommand,
  AccountPasswdModified,
  AntidebugPtraceTraceme,
  AntisandboxContainerCheck,
  AntivmDmi,
  AntivmHypervisorCheck,
  Argv0Spoofing,
  BindShell,
  C2Beaconing,
  ChattrImmutable,
  CredentialBrowser,
  CredentialCloudConfig,
  CredentialShadow,
  CredentialSshKeys,
  CryptoWalletAccess,
  Daemonize,
  DgaDomains,
  DisableSelinuxApparmor,
  DnsTxtQuery,
  DownloadAndExecute,
  EicarTestFile,
  ExecutableDroppedTmp,
  FilelessMemfdExec,
  FirewallTampering,
  HiddenFileCreated,
  HistoryClearing,
  HttpBeaconing,
  HttpRawIp,
  IrcTraffic,
  KernelModuleLoad,
  KillSecurityTools,
  LogWiping,
  LongSleep,
  MassFileModification,
  MassFileRename,
  MinerPool,
  MinerStratum,
  NetworkDiscovery,
  NetworkScanning,
  OutboundSmtp,
  PackedBinary,
  PersistenceCron,
  PersistenceCrontabCommand,
  PersistenceRcScripts,
  PersistenceShellProfile,
  PersistenceSshAuthorizedKeys,
  PersistenceSystemd,
  PersistenceXdgAutostart,
  PipeToShell,
  PrivescSetuidRoot,
  ProcMemDump,
  ProcessDiscovery,
  ProcessInjectionPtrace,
  ProcessRenameMasquerade,
  RansomwareNote,
  RawTcpProtocol,
  ReverseShellCommandLine,
  ReverseShell,
  RootkitLdPreload,
  SelfDeletion,
  SleepEvasion,
  StaticAntidebug,
  StaticCapabilityCombination,
  StaticCryptoConstants,
  StaticElfInjection,
  StaticKeylogger,
  StaticNetworkApis,
  StaticPeInjection,
  StaticPersistence,
  SudoersModified,
  SuidBitSet,
  SysctlSecurityTamper,
  SystemBinaryModified,
  SystemInfoDiscovery,
  Timestomp,
  TorUsage,
  UserDiscovery,
  WinAntidebug,
  WinAntivm,
  WinDisableSecurityTools,
  WinDownloadAndExecute,
  WinFirewallDisabled,
  WinKeylogger,
  WinPersistenceRunKey,
  WinPersistenceService,
  WinProcessInjection,
  WinRansomwareFileRenames,
  WinShadowCopyDeletion,
  WinWineDetection,
];

/**
 * Every signature for one analysis, ready for the processing pipeline's pass over the behaviour log: feed
 * `fold` the log's events, then `complete` with the processed report. complete returns the matches sorted by
 * ascending severity (Cuckoo's order), ready for `report.signatures`; the caller sets `info.score` with
 * scoreOf. A signature that fails is left out and its error added to `report.debug.errors` (when the report
 * has a debug section), so one broken signature costs only itself.
 */
export function startSignatures(paths: AnalysisPaths): { fold: SignatureRun['fold']; complete(report: Report): Promise<SignatureMatch[]> } {
  const failures: string[] = [];
  const run = new SignatureRun(SIGNATURES, paths, {
    onError: (name, error) => failures.push(`Signature ${name} failed: ${error instanceof Error ? error.message : String(error)}`),
  });
  return {
    fold: run.fold,
    async complete(report) {
      const matches = await run.complete(report);
      report.debug?.errors.push(...failures);
      return matches;
    },
  };
}

/** Runs every signature over an analysis on its own: the behaviour log (`logs/events.jsonl`) and the processed report. */
export async function runSignatures(report: Report, paths: AnalysisPaths): Promise<SignatureMatch[]> {
  const signatures = startSignatures(paths);
  await foldOne(join(paths.dir, EVENTS_FILE), signatures.fold, await behaviorStreams(paths));
  return signatures.complete(report);
}
