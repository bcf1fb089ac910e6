/**
 * Sector risk by NAICS code: NAICS 2022 → NACE Rev. 2 (section, division), a one-year default rate
 * and an overdue rate. docs/sector-risk.md states the sources and the assumptions.
 *
 * Concordance: the Eurostat/US Census NAICS 2017–NACE Rev. 2 correspondence at section/division
 * level, taking the division holding most of the NAICS code's activity. NACE Rev. 2 (CAE Rev. 3)
 * rather than Rev. 2.1 because the score's sectors and Banco de Portugal's historical sector
 * series use it.
 *
 * Rates: ASSUMPTIONS, not published figures. They are set to the order of magnitude and the
 * ranking of sectors in Banco de Portugal's "Estudos da Central de Balanços" and "Quadros do
 * Setor" (construction and food service highest, utilities, health and public bodies lowest);
 * replace them with the current BdP tables before relying on the absolute values.
 */

export type RiskLevel = 'low' | 'moderate' | 'elevated' | 'high';

export interface SectorRow {
  naics: string;
  title: string;
  nace: { section: string; division: string };
  default_rate_pct: number;
  overdue_rate_pct: number;
}

/** risk level from the one-year default rate (%): low < 1.5 ≤ moderate < 3 ≤ elevated < 5 ≤ high */
export function riskLevel(defaultRatePct: number): RiskLevel {
  return defaultRatePct < 1.5 ? 'low' : defaultRatePct < 3 ? 'moderate' : defaultRatePct < 5 ? 'elevated' : 'high';
}

export const SECTOR_RATE_SOURCE =
  'Assumption (documented in docs/sector-risk.md): ranked and scaled to Banco de Portugal, Estudos da Central de Balanços / Quadros do Setor (CAE Rev. 3); not a published figure.';
export const CONCORDANCE_SOURCE = 'NAICS 2022 → NACE Rev. 2 at section/division level (Eurostat RAMON / US Census correspondence tables).';

// [naics, title, NACE section, NACE division, default %, overdue %] — overdue omitted (null) inherits the parent's
type Raw = [string, string, string, string, number | null, number | null];
const RAW: Raw[] = [
  ['11', 'Agriculture, Forestry, Fishing and Hunting', 'A', '01', 2.2, 3.4],
  ['111', 'Crop Production', 'A', '01', null, null],
  ['112', 'Animal Production and Aquaculture', 'A', '01', 2.4, null],
  ['113', 'Forestry and Logging', 'A', '02', 2.0, null],
  ['114', 'Fishing, Hunting and Trapping', 'A', '03', 2.6, null],
  ['115', 'Support Activities for Agriculture and Forestry', 'A', '01', null, null],
  ['21', 'Mining, Quarrying, and Oil and Gas Extraction', 'B', '08', 2.4, 3.0],
  ['211', 'Oil and Gas Extraction', 'B', '06', 1.6, null],
  ['212', 'Mining (except Oil and Gas)', 'B', '08', null, null],
  ['213', 'Support Activities for Mining', 'B', '09', null, null],
  ['22', 'Utilities', 'D', '35', 0.9, 1.2],
  ['221', 'Utilities', 'D', '35', null, null],
  ['23', 'Construction', 'F', '41', 4.2, 7.8],
  ['236', 'Construction of Buildings', 'F', '41', 4.4, null],
  ['237', 'Heavy and Civil Engineering Construction', 'F', '42', 3.6, null],
  ['238', 'Specialty Trade Contractors', 'F', '43', 4.6, null],
  ['31', 'Manufacturing (food, beverages, textiles, apparel, leather)', 'C', '10', 2.8, 4.1],
  ['32', 'Manufacturing (wood, paper, printing, chemicals, plastics, minerals)', 'C', '20', 2.3, 3.3],
  ['33', 'Manufacturing (metals, machinery, electronics, vehicles, furniture)', 'C', '25', 2.5, 3.6],
  ['311', 'Food Manufacturing', 'C', '10', 2.4, null],
  ['312', 'Beverage and Tobacco Product Manufacturing', 'C', '11', 1.7, null],
  ['313', 'Textile Mills', 'C', '13', 3.5, null],
  ['314', 'Textile Product Mills', 'C', '13', 3.3, null],
  ['315', 'Apparel Manufacturing', 'C', '14', 3.8, null],
  ['316', 'Leather and Allied Product Manufacturing', 'C', '15', 3.6, null],
  ['321', 'Wood Product Manufacturing', 'C', '16', 3.0, null],
  ['322', 'Paper Manufacturing', 'C', '17', 1.6, null],
  ['323', 'Printing and Related Support Activities', 'C', '18', 3.1, null],
  ['324', 'Petroleum and Coal Products Manufacturing', 'C', '19', 1.2, null],
  ['325', 'Chemical Manufacturing', 'C', '20', 1.5, null],
  ['326', 'Plastics and Rubber Products Manufacturing', 'C', '22', 2.1, null],
  ['327', 'Nonmetallic Mineral Product Manufacturing', 'C', '23', 2.6, null],
  ['331', 'Primary Metal Manufacturing', 'C', '24', 2.2, null],
  ['332', 'Fabricated Metal Product Manufacturing', 'C', '25', 2.6, null],
  ['333', 'Machinery Manufacturing', 'C', '28', 2.0, null],
  ['334', 'Computer and Electronic Product Manufacturing', 'C', '26', 1.8, null],
  ['335', 'Electrical Equipment, Appliance, and Component Manufacturing', 'C', '27', 1.9, null],
  ['336', 'Transportation Equipment Manufacturing', 'C', '29', 1.9, null],
  ['337', 'Furniture and Related Product Manufacturing', 'C', '31', 3.4, null],
  ['339', 'Miscellaneous Manufacturing', 'C', '32', 2.5, null],
  ['42', 'Wholesale Trade', 'G', '46', 2.3, 3.5],
  ['423', 'Merchant Wholesalers, Durable Goods', 'G', '46', null, null],
  ['424', 'Merchant Wholesalers, Nondurable Goods', 'G', '46', null, null],
  ['425', 'Wholesale Trade Agents and Brokers', 'G', '46', 2.6, null],
  ['44', 'Retail Trade', 'G', '47', 3.1, 4.4],
  ['45', 'Retail Trade', 'G', '47', 3.1, 4.4],
  ['441', 'Motor Vehicle and Parts Dealers', 'G', '45', 2.7, null],
  ['444', 'Building Material and Garden Equipment and Supplies Dealers', 'G', '47', 2.9, null],
  ['445', 'Food and Beverage Retailers', 'G', '47', 2.8, null],
  ['449', 'Furniture, Home Furnishings, Electronics, and Appliance Retailers', 'G', '47', 3.4, null],
  ['455', 'General Merchandise Retailers', 'G', '47', 2.2, null],
  ['456', 'Health and Personal Care Retailers', 'G', '47', 1.4, null],
  ['457', 'Gasoline Stations and Fuel Dealers', 'G', '47', 2.0, null],
  ['458', 'Clothing, Clothing Accessories, Shoe, and Jewelry Retailers', 'G', '47', 3.9, null],
  ['459', 'Sporting Goods, Hobby, Musical Instrument, Book, and Miscellaneous Retailers', 'G', '47', 3.5, null],
  ['48', 'Transportation and Warehousing', 'H', '49', 2.9, 4.0],
  ['49', 'Transportation and Warehousing', 'H', '52', 2.9, 4.0],
  ['481', 'Air Transportation', 'H', '51', 2.0, null],
  ['482', 'Rail Transportation', 'H', '49', 1.0, null],
  ['483', 'Water Transportation', 'H', '50', 2.2, null],
  ['484', 'Truck Transportation', 'H', '49', 3.4, null],
  ['485', 'Transit and Ground Passenger Transportation', 'H', '49', 2.6, null],
  ['488', 'Support Activities for Transportation', 'H', '52', 2.4, null],
  ['492', 'Couriers and Messengers', 'H', '53', 2.8, null],
  ['493', 'Warehousing and Storage', 'H', '52', 2.1, null],
  ['51', 'Information', 'J', '58', 2.0, 2.6],
  ['512', 'Motion Picture and Sound Recording Industries', 'J', '59', 3.0, null],
  ['513', 'Publishing Industries', 'J', '58', 2.2, null],
  ['516', 'Broadcasting and Content Providers', 'J', '60', 2.1, null],
  ['517', 'Telecommunications', 'J', '61', 1.1, null],
  ['518', 'Computing Infrastructure Providers, Data Processing, Web Hosting', 'J', '63', 1.6, null],
  ['519', 'Web Search Portals, Libraries, Archives, and Other Information Services', 'J', '63', 1.9, null],
  ['52', 'Finance and Insurance', 'K', '64', 1.2, 1.8],
  ['521', 'Monetary Authorities - Central Bank', 'K', '64', 0.1, null],
  ['522', 'Credit Intermediation and Related Activities', 'K', '64', 1.3, null],
  ['523', 'Securities, Commodity Contracts, and Other Financial Investments', 'K', '66', 1.4, null],
  ['524', 'Insurance Carriers and Related Activities', 'K', '65', 0.8, null],
  ['525', 'Funds, Trusts, and Other Financial Vehicles', 'K', '64', 1.0, null],
  ['53', 'Real Estate and Rental and Leasing', 'L', '68', 2.7, 4.6],
  ['531', 'Real Estate', 'L', '68', null, null],
  ['532', 'Rental and Leasing Services', 'N', '77', 2.5, null],
  ['533', 'Lessors of Nonfinancial Intangible Assets', 'N', '77', 1.5, null],
  ['54', 'Professional, Scientific, and Technical Services', 'M', '69', 1.8, 2.5],
  ['541', 'Professional, Scientific, and Technical Services', 'M', '69', null, null],
  ['5411', 'Legal Services', 'M', '69', 1.2, null],
  ['5412', 'Accounting, Tax Preparation, Bookkeeping, and Payroll Services', 'M', '69', 1.1, null],
  ['5413', 'Architectural, Engineering, and Related Services', 'M', '71', 2.3, null],
  ['5415', 'Computer Systems Design and Related Services', 'J', '62', 1.6, null],
  ['5416', 'Management, Scientific, and Technical Consulting Services', 'M', '70', 1.9, null],
  ['5417', 'Scientific Research and Development Services', 'M', '72', 1.4, null],
  ['5418', 'Advertising, Public Relations, and Related Services', 'M', '73', 2.6, null],
  ['55', 'Management of Companies and Enterprises', 'M', '70', 1.3, 1.9],
  ['551', 'Management of Companies and Enterprises', 'M', '70', null, null],
  ['56', 'Administrative and Support and Waste Management and Remediation Services', 'N', '82', 3.0, 4.3],
  ['561', 'Administrative and Support Services', 'N', '82', null, null],
  ['5613', 'Employment Services', 'N', '78', 3.3, null],
  ['5615', 'Travel Arrangement and Reservation Services', 'N', '79', 3.2, null],
  ['5617', 'Services to Buildings and Dwellings', 'N', '81', 3.1, null],
  ['562', 'Waste Management and Remediation Services', 'E', '38', 1.6, null],
  ['61', 'Educational Services', 'P', '85', 1.9, 2.4],
  ['611', 'Educational Services', 'P', '85', null, null],
  ['62', 'Health Care and Social Assistance', 'Q', '86', 1.3, 1.9],
  ['621', 'Ambulatory Health Care Services', 'Q', '86', 1.2, null],
  ['622', 'Hospitals', 'Q', '86', 0.8, null],
  ['623', 'Nursing and Residential Care Facilities', 'Q', '87', 1.5, null],
  ['624', 'Social Assistance', 'Q', '88', 1.6, null],
  ['71', 'Arts, Entertainment, and Recreation', 'R', '90', 3.4, 4.8],
  ['711', 'Performing Arts, Spectator Sports, and Related Industries', 'R', '90', 3.6, null],
  ['712', 'Museums, Historical Sites, and Similar Institutions', 'R', '91', 1.5, null],
  ['713', 'Amusement, Gambling, and Recreation Industries', 'R', '93', 3.3, null],
  ['72', 'Accommodation and Food Services', 'I', '56', 4.6, 6.9],
  ['721', 'Accommodation', 'I', '55', 3.2, null],
  ['722', 'Food Services and Drinking Places', 'I', '56', 5.4, null],
  ['81', 'Other Services (except Public Administration)', 'S', '96', 3.2, 4.5],
  ['811', 'Repair and Maintenance', 'S', '95', 3.0, null],
  ['812', 'Personal and Laundry Services', 'S', '96', 3.4, null],
  ['813', 'Religious, Grantmaking, Civic, Professional, and Similar Organizations', 'S', '94', 1.4, null],
  ['814', 'Private Households', 'T', '97', 2.0, null],
  ['92', 'Public Administration', 'O', '84', 0.3, 0.9],
  ['921', 'Executive, Legislative, and Other General Government Support', 'O', '84', null, null],
  ['922', 'Justice, Public Order, and Safety Activities', 'O', '84', null, null],
  ['923', 'Administration of Human Resource Programs', 'O', '84', null, null],
  ['924', 'Administration of Environmental Quality Programs', 'O', '84', null, null],
  ['925', 'Administration of Housing Programs, Urban Planning, and Community Development', 'O', '84', null, null],
  ['926', 'Administration of Economic Programs', 'O', '84', null, null],
  ['928', 'National Security and International Affairs', 'O', '84', null, null],
];

/** The 2-digit sector a NAICS code belongs to (31–33, 44–45 and 48–49 are single sectors split over codes). */
const sectorOf = (code: string) => code.slice(0, 2);

export const SECTOR_TABLE: ReadonlyMap<string, SectorRow> = (() => {
  const byCode = new Map<string, SectorRow>();
  for (const [naics, title, section, division, dr, or] of RAW) {
    // a subsector without its own rate inherits its nearest listed ancestor's
    let parent: SectorRow | undefined;
    for (let len = naics.length - 1; len >= 2 && !parent; len--) parent = byCode.get(naics.slice(0, len));
    if (!parent && naics.length > 2) parent = byCode.get(sectorOf(naics));
    const default_rate_pct = dr ?? parent?.default_rate_pct;
    const overdue_rate_pct = or ?? parent?.overdue_rate_pct;
    if (default_rate_pct === undefined || overdue_rate_pct === undefined) throw new Error(`sector table: ${naics} has no rate and no parent`);
    byCode.set(naics, { naics, title, nace: { section, division }, default_rate_pct, overdue_rate_pct });
  }
  return byCode;
})();

export const NAICS_PATTERN = /^[0-9]{2,6}$/;

/**
 * The most specific row for a NAICS code: the code itself, else its 4-, 3- then 2-digit parent
 * (a 6-digit industry inherits its subsector's figures). Null when even the sector is unknown.
 */
export function lookupNaics(code: string): { row: SectorRow; matched: string } | null {
  for (let len = code.length; len >= 2; len--) {
    const row = SECTOR_TABLE.get(code.slice(0, len));
    if (row) return { row, matched: row.naics };
  }
  return null;
}

/** NACE sections (Rev. 2) of a NAICS code's rows, for counting the tenant's scored companies. */
export const naceSectionOf = (code: string) => lookupNaics(code)?.row.nace.section ?? null;
