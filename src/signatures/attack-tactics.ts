/**
 * MITRE ATT&CK (Enterprise) tactics, in the matrix's order, and the tactics of each technique nestbox's
 * signatures and static rules name (attack.ts describes the techniques; this says where they sit). Keyed
 * by the parent technique: a sub-technique (T1059.004) sits under its parent's tactics. The web
 * interface's ATT&CK matrix reads it; test/unit/attack-tactics.test.ts checks that it covers every
 * technique a signature or rule names. Plain data without imports, so the interface's bundle takes it as is.
 */

export const TACTICS = [
  { id: 'TA0043', name: 'Reconnaissance' },
  { id: 'TA0042', name: 'Resource Development' },
  { id: 'TA0001', name: 'Initial Access' },
  { id: 'TA0002', name: 'Execution' },
  { id: 'TA0003', name: 'Persistence' },
  { id: 'TA0004', name: 'Privilege Escalation' },
  { id: 'TA0005', name: 'Defense Evasion' },
  { id: 'TA0006', name: 'Credential Access' },
  { id: 'TA0007', name: 'Discovery' },
  { id: 'TA0008', name: 'Lateral Movement' },
  { id: 'TA0009', name: 'Collection' },
  { id: 'TA0011', name: 'Command and Control' },
  { id: 'TA0010', name: 'Exfiltration' },
  { id: 'TA0040', name: 'Impact' },
] as const;

export type TacticId = (typeof TACTICS)[number]['id'];

const EXECUTION = 'TA0002';
const PERSISTENCE = 'TA0003';
const PRIVILEGE_ESCALATION = 'TA0004';
const DEFENSE_EVASION = 'TA0005';
const CREDENTIAL_ACCESS = 'TA0006';
const DISCOVERY = 'TA0007';
const COLLECTION = 'TA0009';
const COMMAND_AND_CONTROL = 'TA0011';
const IMPACT = 'TA0040';

export const TECHNIQUE_TACTICS: Readonly<Record<string, readonly TacticId[]>> = {
  T1003: [CREDENTIAL_ACCESS],
  T1005: [COLLECTION],
  T1014: [DEFENSE_EVASION],
  T1016: [DISCOVERY],
  T1027: [DEFENSE_EVASION],
  T1033: [DISCOVERY],
  T1036: [DEFENSE_EVASION],
  T1037: [PERSISTENCE, PRIVILEGE_ESCALATION],
  T1046: [DISCOVERY],
  T1053: [EXECUTION, PERSISTENCE, PRIVILEGE_ESCALATION],
  T1055: [DEFENSE_EVASION, PRIVILEGE_ESCALATION],
  T1056: [COLLECTION, CREDENTIAL_ACCESS],
  T1057: [DISCOVERY],
  T1059: [EXECUTION],
  T1070: [DEFENSE_EVASION],
  T1071: [COMMAND_AND_CONTROL],
  T1082: [DISCOVERY],
  T1090: [COMMAND_AND_CONTROL],
  T1095: [COMMAND_AND_CONTROL],
  T1098: [PERSISTENCE, PRIVILEGE_ESCALATION],
  T1105: [COMMAND_AND_CONTROL],
  T1106: [EXECUTION],
  T1136: [PERSISTENCE],
  T1222: [DEFENSE_EVASION],
  T1486: [IMPACT],
  T1490: [IMPACT],
  T1496: [IMPACT],
  T1497: [DEFENSE_EVASION, DISCOVERY],
  T1543: [PERSISTENCE, PRIVILEGE_ESCALATION],
  T1546: [PERSISTENCE, PRIVILEGE_ESCALATION],
  T1547: [PERSISTENCE, PRIVILEGE_ESCALATION],
  T1548: [PRIVILEGE_ESCALATION, DEFENSE_EVASION],
  T1552: [CREDENTIAL_ACCESS],
  T1554: [PERSISTENCE],
  T1555: [CREDENTIAL_ACCESS],
  T1562: [DEFENSE_EVASION],
  T1564: [DEFENSE_EVASION],
  T1568: [COMMAND_AND_CONTROL],
  T1573: [COMMAND_AND_CONTROL],
  T1574: [PERSISTENCE, PRIVILEGE_ESCALATION, DEFENSE_EVASION],
  T1620: [DEFENSE_EVASION],
  T1622: [DEFENSE_EVASION, DISCOVERY],
};

/** The tactics of a technique id such as "T1059.004" or "T1059_004"; [] for one this table lacks. */
export function tacticsOf(technique: string): readonly TacticId[] {
  const parent = /^(T\d{4})(?:[._]\d{3})?$/.exec(technique)?.[1];
  return (parent !== undefined && Object.hasOwn(TECHNIQUE_TACTICS, parent) ? TECHNIQUE_TACTICS[parent] : undefined) ?? [];
}
