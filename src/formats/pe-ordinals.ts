/**
 * Names of functions that DLLs export by ordinal, for imports by ordinal: pefile names such an import
 * after its function for ws2_32.dll, wsock32.dll and oleaut32.dll, and so does imphash. Any other
 * ordinal import is "ord<N>", as pefile does for ordinals it does not know.
 *
 * The tables are "ordinal name" pairs: Winsock's fixed ordinals (Winsock 1.1, which ws2_32 keeps), and
 * OLE Automation's ordinals from 2 to 424 (the numbering is stable across Windows versions; the later
 * Var* arithmetic functions are numbered differently from one version to another and are left out).
 */

const WINSOCK = table(`
  1 accept 2 bind 3 closesocket 4 connect 5 getpeername 6 getsockname 7 getsockopt 8 htonl 9 htons
  10 ioctlsocket 11 inet_addr 12 inet_ntoa 13 listen 14 ntohl 15 ntohs 16 recv 17 recvfrom 18 select
  19 send 20 sendto 21 setsockopt 22 shutdown 23 socket 51 gethostbyaddr 52 gethostbyname
  53 getprotobyname 54 getprotobynumber 55 getservbyname 56 getservbyport 57 gethostname
  101 WSAAsyncSelect 102 WSAAsyncGetHostByAddr 103 WSAAsyncGetHostByName 104 WSAAsyncGetProtoByNumber
  105 WSAAsyncGetProtoByName 106 WSAAsyncGetServByPort 107 WSAAsyncGetServByName 108 WSACancelAsyncRequest
  109 WSASetBlockingHook 110 WSAUnhookBlockingHook 111 WSAGetLastError 112 WSASetLastError
  113 WSACancelBlockingCall 114 WSAIsBlocking 115 WSAStartup 116 WSACleanup 151 __WSAFDIsSet 500 WEP
`);

const OLE_AUTOMATION = table(`
  2 SysAllocString 3 SysReAllocString 4 SysAllocStringLen 5 SysReAllocStringLen 6 SysFreeString 7 SysStringLen
  8 VariantInit 9 VariantClear 10 VariantCopy 11 VariantCopyInd 12 VariantChangeType 13 VariantTimeToDosDateTime
  14 DosDateTimeToVariantTime 15 SafeArrayCreate 16 SafeArrayDestroy 17 SafeArrayGetDim 18 SafeArrayGetElemsize
  19 SafeArrayGetUBound 20 SafeArrayGetLBound 21 SafeArrayLock 22 SafeArrayUnlock 23 SafeArrayAccessData
  24 SafeArrayUnaccessData 25 SafeArrayGetElement 26 SafeArrayPutElement 27 SafeArrayCopy 28 DispGetParam
  29 DispGetIDsOfNames 30 DispInvoke 31 CreateDispTypeInfo 32 CreateStdDispatch 33 RegisterActiveObject
  34 RevokeActiveObject 35 GetActiveObject 36 SafeArrayAllocDescriptor 37 SafeArrayAllocData 38 SafeArrayDestroyDescriptor
  39 SafeArrayDestroyData 40 SafeArrayRedim 46 VarParseNumFromStr 47 VarNumFromParseNum 48 VarI2FromUI1
  49 VarI2FromI4 50 VarI2FromR4 51 VarI2FromR8 52 VarI2FromCy 53 VarI2FromDate 54 VarI2FromStr 55 VarI2FromDisp
  56 VarI2FromBool 58 VarI4FromUI1 59 VarI4FromI2 60 VarI4FromR4 61 VarI4FromR8 62 VarI4FromCy 63 VarI4FromDate
  64 VarI4FromStr 65 VarI4FromDisp 66 VarI4FromBool 68 VarR4FromUI1 69 VarR4FromI2 70 VarR4FromI4 71 VarR4FromR8
  72 VarR4FromCy 73 VarR4FromDate 74 VarR4FromStr 75 VarR4FromDisp 76 VarR4FromBool 78 VarR8FromUI1
  79 VarR8FromI2 80 VarR8FromI4 81 VarR8FromR4 82 VarR8FromCy 83 VarR8FromDate 84 VarR8FromStr 85 VarR8FromDisp
  86 VarR8FromBool 88 VarDateFromUI1 89 VarDateFromI2 90 VarDateFromI4 91 VarDateFromR4 92 VarDateFromR8
  93 VarDateFromCy 94 VarDateFromStr 95 VarDateFromDisp 96 VarDateFromBool 98 VarCyFromUI1 99 VarCyFromI2
  100 VarCyFromI4 101 VarCyFromR4 102 VarCyFromR8 103 VarCyFromDate 104 VarCyFromStr 105 VarCyFromDisp
  106 VarCyFromBool 108 VarBstrFromUI1 109 VarBstrFromI2 110 VarBstrFromI4 111 VarBstrFromR4 112 VarBstrFromR8
  113 VarBstrFromCy 114 VarBstrFromDate 115 VarBstrFromDisp 116 VarBstrFromBool 118 VarBoolFromUI1
  119 VarBoolFromI2 120 VarBoolFromI4 121 VarBoolFromR4 122 VarBoolFromR8 123 VarBoolFromDate 124 VarBoolFromCy
  125 VarBoolFromStr 126 VarBoolFromDisp 130 VarUI1FromI2 131 VarUI1FromI4 132 VarUI1FromR4 133 VarUI1FromR8
  134 VarUI1FromCy 135 VarUI1FromDate 136 VarUI1FromStr 137 VarUI1FromDisp 138 VarUI1FromBool 146 DispCallFunc
  147 VariantChangeTypeEx 148 SafeArrayPtrOfIndex 149 SysStringByteLen 150 SysAllocStringByteLen 160 CreateTypeLib
  161 LoadTypeLib 162 LoadRegTypeLib 163 RegisterTypeLib 164 QueryPathOfRegTypeLib 165 LHashValOfNameSys
  166 LHashValOfNameSysA 170 OaBuildVersion 171 ClearCustData 180 CreateTypeLib2 183 LoadTypeLibEx
  184 SystemTimeToVariantTime 185 VariantTimeToSystemTime 186 UnRegisterTypeLib 190 VarDecFromUI1 191 VarDecFromI2
  192 VarDecFromI4 193 VarDecFromR4 194 VarDecFromR8 195 VarDecFromDate 196 VarDecFromCy 197 VarDecFromStr
  198 VarDecFromDisp 199 VarDecFromBool 200 GetErrorInfo 201 SetErrorInfo 202 CreateErrorInfo 205 VarI2FromI1
  206 VarI2FromUI2 207 VarI2FromUI4 208 VarI2FromDec 209 VarI4FromI1 210 VarI4FromUI2 211 VarI4FromUI4
  212 VarI4FromDec 213 VarR4FromI1 214 VarR4FromUI2 215 VarR4FromUI4 216 VarR4FromDec 217 VarR8FromI1
  218 VarR8FromUI2 219 VarR8FromUI4 220 VarR8FromDec 221 VarDateFromI1 222 VarDateFromUI2 223 VarDateFromUI4
  224 VarDateFromDec 225 VarCyFromI1 226 VarCyFromUI2 227 VarCyFromUI4 228 VarCyFromDec 229 VarBstrFromI1
  230 VarBstrFromUI2 231 VarBstrFromUI4 232 VarBstrFromDec 233 VarBoolFromI1 234 VarBoolFromUI2 235 VarBoolFromUI4
  236 VarBoolFromDec 237 VarUI1FromI1 238 VarUI1FromUI2 239 VarUI1FromUI4 240 VarUI1FromDec 241 VarDecFromI1
  242 VarDecFromUI2 243 VarDecFromUI4 244 VarI1FromUI1 245 VarI1FromI2 246 VarI1FromI4 247 VarI1FromR4
  248 VarI1FromR8 249 VarI1FromDate 250 VarI1FromCy 251 VarI1FromStr 252 VarI1FromDisp 253 VarI1FromBool
  254 VarI1FromUI2 255 VarI1FromUI4 256 VarI1FromDec 257 VarUI2FromUI1 258 VarUI2FromI2 259 VarUI2FromI4
  260 VarUI2FromR4 261 VarUI2FromR8 262 VarUI2FromDate 263 VarUI2FromCy 264 VarUI2FromStr 265 VarUI2FromDisp
  266 VarUI2FromBool 267 VarUI2FromI1 268 VarUI2FromUI4 269 VarUI2FromDec 270 VarUI4FromUI1 271 VarUI4FromI2
  272 VarUI4FromI4 273 VarUI4FromR4 274 VarUI4FromR8 275 VarUI4FromDate 276 VarUI4FromCy 277 VarUI4FromStr
  278 VarUI4FromDisp 279 VarUI4FromBool 280 VarUI4FromI1 281 VarUI4FromUI2 282 VarUI4FromDec 283 BSTR_UserSize
  284 BSTR_UserMarshal 285 BSTR_UserUnmarshal 286 BSTR_UserFree 287 VARIANT_UserSize 288 VARIANT_UserMarshal
  289 VARIANT_UserUnmarshal 290 VARIANT_UserFree 291 LPSAFEARRAY_UserSize 292 LPSAFEARRAY_UserMarshal
  293 LPSAFEARRAY_UserUnmarshal 294 LPSAFEARRAY_UserFree 295 LPSAFEARRAY_Size 296 LPSAFEARRAY_Marshal
  297 LPSAFEARRAY_Unmarshal 330 VarDateFromUdate 331 VarUdateFromDate 332 GetAltMonthNames 411 SafeArrayCreateVector
  412 SafeArrayCopyData 413 VectorFromBstr 414 BstrFromVector 415 OleIconToCursor 416 OleCreatePropertyFrameIndirect
  417 OleCreatePropertyFrame 418 OleLoadPicture 419 OleCreatePictureIndirect 420 OleCreateFontIndirect
  421 OleTranslateColor 422 OleLoadPictureFile 423 OleSavePictureFile 424 OleLoadPicturePath
`);

const BY_DLL: Record<string, ReadonlyMap<number, string>> = {
  'ws2_32.dll': WINSOCK,
  'wsock32.dll': WINSOCK,
  'oleaut32.dll': OLE_AUTOMATION,
};

/** The function a DLL exports under an ordinal, when it is a well-known one. */
export function ordinalName(dll: string, ordinal: number): string | null {
  return BY_DLL[dll.toLowerCase()]?.get(ordinal) ?? null;
}

/** Every known ordinal of a DLL, for tests that check the tables. */
export function knownOrdinals(dll: string): ReadonlyMap<number, string> {
  return BY_DLL[dll.toLowerCase()] ?? new Map();
}

function table(pairs: string): Map<number, string> {
  const words = pairs.split(/\s+/).filter(Boolean);
  const names = new Map<number, string>();
  for (let i = 0; i + 1 < words.length; i += 2) names.set(Number(words[i]), words[i + 1]!);
  return names;
}
