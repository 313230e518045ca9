/**
 * Windows language ids of PE resources, named as pefile names them (LANG_*, SUBLANG_*). Only the
 * common languages and their main sub-languages are listed; others give null.
 */

const LANGUAGES: Record<number, string> = {
  0x00: 'NEUTRAL', 0x01: 'ARABIC', 0x02: 'BULGARIAN', 0x03: 'CATALAN', 0x04: 'CHINESE', 0x05: 'CZECH',
  0x06: 'DANISH', 0x07: 'GERMAN', 0x08: 'GREEK', 0x09: 'ENGLISH', 0x0a: 'SPANISH', 0x0b: 'FINNISH',
  0x0c: 'FRENCH', 0x0d: 'HEBREW', 0x0e: 'HUNGARIAN', 0x0f: 'ICELANDIC', 0x10: 'ITALIAN', 0x11: 'JAPANESE',
  0x12: 'KOREAN', 0x13: 'DUTCH', 0x14: 'NORWEGIAN', 0x15: 'POLISH', 0x16: 'PORTUGUESE', 0x18: 'ROMANIAN',
  0x19: 'RUSSIAN', 0x1a: 'CROATIAN', 0x1b: 'SLOVAK', 0x1c: 'ALBANIAN', 0x1d: 'SWEDISH', 0x1e: 'THAI',
  0x1f: 'TURKISH', 0x20: 'URDU', 0x21: 'INDONESIAN', 0x22: 'UKRAINIAN', 0x23: 'BELARUSIAN', 0x24: 'SLOVENIAN',
  0x25: 'ESTONIAN', 0x26: 'LATVIAN', 0x27: 'LITHUANIAN', 0x29: 'FARSI', 0x2a: 'VIETNAMESE', 0x2b: 'ARMENIAN',
  0x2c: 'AZERI', 0x2d: 'BASQUE', 0x2f: 'MACEDONIAN', 0x36: 'AFRIKAANS', 0x37: 'GEORGIAN', 0x38: 'FAEROESE',
  0x39: 'HINDI', 0x3e: 'MALAY', 0x3f: 'KAZAK', 0x41: 'SWAHILI', 0x7f: 'INVARIANT',
};

/** Sub-languages that carry the language's own name, by language and sub-language id. */
const SUBLANGUAGES: Record<number, Record<number, string>> = {
  0x04: { 1: 'CHINESE_TRADITIONAL', 2: 'CHINESE_SIMPLIFIED', 3: 'CHINESE_HONGKONG', 4: 'CHINESE_SINGAPORE', 5: 'CHINESE_MACAU' },
  0x07: { 1: 'GERMAN', 2: 'GERMAN_SWISS', 3: 'GERMAN_AUSTRIAN', 4: 'GERMAN_LUXEMBOURG', 5: 'GERMAN_LIECHTENSTEIN' },
  0x09: {
    1: 'ENGLISH_US', 2: 'ENGLISH_UK', 3: 'ENGLISH_AUS', 4: 'ENGLISH_CAN', 5: 'ENGLISH_NZ', 6: 'ENGLISH_EIRE',
    7: 'ENGLISH_SOUTH_AFRICA', 8: 'ENGLISH_JAMAICA', 9: 'ENGLISH_CARIBBEAN', 10: 'ENGLISH_BELIZE', 11: 'ENGLISH_TRINIDAD',
    12: 'ENGLISH_ZIMBABWE', 13: 'ENGLISH_PHILIPPINES',
  },
  0x0a: { 1: 'SPANISH', 2: 'SPANISH_MEXICAN', 3: 'SPANISH_MODERN' },
  0x0c: { 1: 'FRENCH', 2: 'FRENCH_BELGIAN', 3: 'FRENCH_CANADIAN', 4: 'FRENCH_SWISS', 5: 'FRENCH_LUXEMBOURG', 6: 'FRENCH_MONACO' },
  0x10: { 1: 'ITALIAN', 2: 'ITALIAN_SWISS' },
  0x13: { 1: 'DUTCH', 2: 'DUTCH_BELGIAN' },
  0x16: { 1: 'PORTUGUESE_BRAZILIAN', 2: 'PORTUGUESE' },
  0x1d: { 1: 'SWEDISH', 2: 'SWEDISH_FINLAND' },
};

/** Names every language shares, by sub-language id. */
const GENERIC_SUBLANGUAGES: Record<number, string> = { 0: 'NEUTRAL', 1: 'DEFAULT', 2: 'SYS_DEFAULT' };

export function languageName(language: number): string | null {
  const name = LANGUAGES[language];
  return name === undefined ? null : `LANG_${name}`;
}

export function sublanguageName(language: number, sublanguage: number): string | null {
  if (language === 0 && sublanguage === 0) return 'SUBLANG_NEUTRAL';
  const name = SUBLANGUAGES[language]?.[sublanguage] ?? GENERIC_SUBLANGUAGES[sublanguage];
  return name === undefined ? null : `SUBLANG_${name}`;
}
