/**
 * Country names as the UN consolidated list writes them → ISO 3166-1 alpha-2 (the EU list and
 * API callers use codes). Covers every name in the UN list of 2026-02-27 and the usual variants;
 * a name not here is kept as written and never counted as agreeing or disagreeing.
 */
const NAMES: Record<string, string> = {
  "democratic people's republic of korea": 'KP', 'north korea': 'KP', 'republic of korea': 'KR', 'south korea': 'KR',
  afghanistan: 'AF', iraq: 'IQ', 'iran (islamic republic of)': 'IR', iran: 'IR', pakistan: 'PK',
  'democratic republic of the congo': 'CD', congo: 'CG', indonesia: 'ID', tunisia: 'TN', algeria: 'DZ', yemen: 'YE',
  philippines: 'PH', libya: 'LY', 'bosnia and herzegovina': 'BA', rwanda: 'RW', 'central african republic': 'CF', egypt: 'EG',
  somalia: 'SO', 'saudi arabia': 'SA', 'united kingdom of great britain and northern ireland': 'GB', 'united kingdom': 'GB',
  'russian federation': 'RU', russia: 'RU', 'syrian arab republic': 'SY', syria: 'SY', sudan: 'SD', 'south sudan': 'SS',
  'united states of america': 'US', 'united states': 'US', morocco: 'MA', mali: 'ML', uganda: 'UG', 'guinea-bissau': 'GW',
  haiti: 'HT', jordan: 'JO', kuwait: 'KW', china: 'CN', 'china, hong kong special administrative region': 'HK', france: 'FR',
  'united republic of tanzania': 'TZ', tanzania: 'TZ', germany: 'DE', kenya: 'KE', mauritania: 'MR', qatar: 'QA',
  'united arab emirates': 'AE', 'state of palestine': 'PS', malaysia: 'MY', nigeria: 'NG', chad: 'TD', eritrea: 'ER',
  georgia: 'GE', 'trinidad and tobago': 'TT', ethiopia: 'ET', niger: 'NE', bangladesh: 'BD', india: 'IN', 'türkiye': 'TR',
  turkey: 'TR', uzbekistan: 'UZ', norway: 'NO', senegal: 'SN', tajikistan: 'TJ', sweden: 'SE', liechtenstein: 'LI',
  switzerland: 'CH', belgium: 'BE', 'british virgin islands': 'VG', 'marshall islands': 'MH', panama: 'PA', singapore: 'SG',
  lebanon: 'LB', albania: 'AL', netherlands: 'NL', comoros: 'KM', portugal: 'PT', spain: 'ES', italy: 'IT', brazil: 'BR',
  angola: 'AO', mozambique: 'MZ', 'cabo verde': 'CV', 'cape verde': 'CV', 'sao tome and principe': 'ST', 'timor-leste': 'TL',
  belarus: 'BY', ukraine: 'UA', venezuela: 'VE', 'venezuela (bolivarian republic of)': 'VE', myanmar: 'MM', cuba: 'CU',
  nicaragua: 'NI', zimbabwe: 'ZW', burundi: 'BI', guinea: 'GN', 'bahrain': 'BH', oman: 'OM', azerbaijan: 'AZ', kazakhstan: 'KZ',
  kyrgyzstan: 'KG', turkmenistan: 'TM', moldova: 'MD', 'republic of moldova': 'MD', serbia: 'RS', 'north macedonia': 'MK',
  austria: 'AT', denmark: 'DK', finland: 'FI', ireland: 'IE', luxembourg: 'LU', greece: 'GR', cyprus: 'CY', malta: 'MT',
  canada: 'CA', australia: 'AU', japan: 'JP', 'south africa': 'ZA', israel: 'IL', 'sri lanka': 'LK', maldives: 'MV',
};

export function countryCode(value: string | null | undefined): string | null {
  if (!value) return null;
  const v = value.trim();
  if (/^[A-Za-z]{2}$/.test(v)) return v.toUpperCase();
  return NAMES[v.toLowerCase()] ?? null;
}
