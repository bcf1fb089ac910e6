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
 *
 * Titles in English (NAICS's own) and in European Portuguese (pt-PT, AO90 spelling): NAICS has no
 * official Portuguese version, so each is translated in the words CAE Rev. 3 uses for the same
 * activity where it has one ("Indústrias alimentares", "Atividades de edição"); the NACE section is
 * named as Eurostat (English) and INE's CAE Rev. 3 (Portuguese) name it, the ESG sector list's names.
 */

import { SECTORS } from '../esg/questionnaire';

/** the languages the answer's texts exist in (Accept-Language, plugins/request-state langOf) */
export type SectorLang = 'en' | 'pt';

export type RiskLevel = 'low' | 'moderate' | 'elevated' | 'high';

export interface SectorRow {
  naics: string;
  /** NAICS's English title */
  title: string;
  /** the same in European Portuguese */
  title_pt: string;
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
const SOURCES: Record<SectorLang, readonly string[]> = {
  en: [CONCORDANCE_SOURCE, SECTOR_RATE_SOURCE],
  pt: [
    'NAICS 2022 → NACE Rev. 2 ao nível da secção e da divisão (tabelas de correspondência do Eurostat RAMON e do US Census).',
    'Pressuposto (documentado em docs/sector-risk.md): ordenação e ordem de grandeza segundo o Banco de Portugal, Estudos da Central de Balanços / Quadros do Setor (CAE Rev. 3); não é um valor publicado.',
  ],
};
/** the answer's `sources`: the concordance, then the rates' */
export const sectorSources = (lang: SectorLang): string[] => [...SOURCES[lang]];

/** a row's title in the answer's language */
export const sectorTitle = (row: SectorRow, lang: SectorLang) => (lang === 'pt' ? row.title_pt : row.title);

const SECTION_TITLES = new Map(SECTORS.map((s) => [s.code, s]));
/** a NACE Rev. 2 section's title: Eurostat's in English, INE's (CAE Rev. 3) in Portuguese */
export function naceSectionTitle(section: string, lang: SectorLang): string {
  const s = SECTION_TITLES.get(section);
  if (!s) throw new Error(`sector table: no NACE section ${section}`);
  return lang === 'pt' ? s.name_pt : s.name;
}

// [naics, title, title in Portuguese, NACE section, NACE division, default %, overdue %] — overdue omitted (null) inherits the parent's
type Raw = [string, string, string, string, string, number | null, number | null];
const RAW: Raw[] = [
  ['11', 'Agriculture, Forestry, Fishing and Hunting', 'Agricultura, silvicultura, pesca e caça', 'A', '01', 2.2, 3.4],
  ['111', 'Crop Production', 'Produção vegetal', 'A', '01', null, null],
  ['112', 'Animal Production and Aquaculture', 'Produção animal e aquicultura', 'A', '01', 2.4, null],
  ['113', 'Forestry and Logging', 'Silvicultura e exploração florestal', 'A', '02', 2.0, null],
  ['114', 'Fishing, Hunting and Trapping', 'Pesca, caça e captura de animais', 'A', '03', 2.6, null],
  ['115', 'Support Activities for Agriculture and Forestry', 'Atividades de apoio à agricultura e à silvicultura', 'A', '01', null, null],
  ['21', 'Mining, Quarrying, and Oil and Gas Extraction', 'Extração mineira, exploração de pedreiras e extração de petróleo e gás', 'B', '08', 2.4, 3.0],
  ['211', 'Oil and Gas Extraction', 'Extração de petróleo bruto e gás natural', 'B', '06', 1.6, null],
  ['212', 'Mining (except Oil and Gas)', 'Indústrias extrativas (exceto petróleo e gás)', 'B', '08', null, null],
  ['213', 'Support Activities for Mining', 'Atividades dos serviços relacionados com as indústrias extrativas', 'B', '09', null, null],
  ['22', 'Utilities', 'Eletricidade, gás, água e saneamento', 'D', '35', 0.9, 1.2],
  ['221', 'Utilities', 'Eletricidade, gás, água e saneamento', 'D', '35', null, null],
  ['23', 'Construction', 'Construção', 'F', '41', 4.2, 7.8],
  ['236', 'Construction of Buildings', 'Construção de edifícios', 'F', '41', 4.4, null],
  ['237', 'Heavy and Civil Engineering Construction', 'Engenharia civil', 'F', '42', 3.6, null],
  ['238', 'Specialty Trade Contractors', 'Atividades especializadas de construção', 'F', '43', 4.6, null],
  ['31', 'Manufacturing (food, beverages, textiles, apparel, leather)', 'Indústrias transformadoras (alimentação, bebidas, têxteis, vestuário, couro)', 'C', '10', 2.8, 4.1],
  ['32', 'Manufacturing (wood, paper, printing, chemicals, plastics, minerals)', 'Indústrias transformadoras (madeira, papel, impressão, produtos químicos, plásticos, minerais)', 'C', '20', 2.3, 3.3],
  ['33', 'Manufacturing (metals, machinery, electronics, vehicles, furniture)', 'Indústrias transformadoras (metais, máquinas, eletrónica, veículos, mobiliário)', 'C', '25', 2.5, 3.6],
  ['311', 'Food Manufacturing', 'Indústrias alimentares', 'C', '10', 2.4, null],
  ['312', 'Beverage and Tobacco Product Manufacturing', 'Indústria das bebidas e do tabaco', 'C', '11', 1.7, null],
  ['313', 'Textile Mills', 'Preparação, fiação, tecelagem e acabamento de têxteis', 'C', '13', 3.5, null],
  ['314', 'Textile Product Mills', 'Fabricação de artigos têxteis', 'C', '13', 3.3, null],
  ['315', 'Apparel Manufacturing', 'Indústria do vestuário', 'C', '14', 3.8, null],
  ['316', 'Leather and Allied Product Manufacturing', 'Indústria do couro e dos produtos do couro', 'C', '15', 3.6, null],
  ['321', 'Wood Product Manufacturing', 'Fabricação de produtos de madeira', 'C', '16', 3.0, null],
  ['322', 'Paper Manufacturing', 'Fabricação de pasta, de papel, de cartão e seus artigos', 'C', '17', 1.6, null],
  ['323', 'Printing and Related Support Activities', 'Impressão e atividades dos serviços relacionados com a impressão', 'C', '18', 3.1, null],
  ['324', 'Petroleum and Coal Products Manufacturing', 'Fabricação de coque e de produtos petrolíferos refinados', 'C', '19', 1.2, null],
  ['325', 'Chemical Manufacturing', 'Fabricação de produtos químicos', 'C', '20', 1.5, null],
  ['326', 'Plastics and Rubber Products Manufacturing', 'Fabricação de artigos de borracha e de matérias plásticas', 'C', '22', 2.1, null],
  ['327', 'Nonmetallic Mineral Product Manufacturing', 'Fabricação de produtos minerais não metálicos', 'C', '23', 2.6, null],
  ['331', 'Primary Metal Manufacturing', 'Indústrias metalúrgicas de base', 'C', '24', 2.2, null],
  ['332', 'Fabricated Metal Product Manufacturing', 'Fabricação de produtos metálicos, exceto máquinas e equipamentos', 'C', '25', 2.6, null],
  ['333', 'Machinery Manufacturing', 'Fabricação de máquinas e de equipamentos', 'C', '28', 2.0, null],
  ['334', 'Computer and Electronic Product Manufacturing', 'Fabricação de equipamentos informáticos e de produtos eletrónicos', 'C', '26', 1.8, null],
  ['335', 'Electrical Equipment, Appliance, and Component Manufacturing', 'Fabricação de equipamento elétrico, eletrodomésticos e componentes', 'C', '27', 1.9, null],
  ['336', 'Transportation Equipment Manufacturing', 'Fabricação de material de transporte', 'C', '29', 1.9, null],
  ['337', 'Furniture and Related Product Manufacturing', 'Fabricação de mobiliário e de artigos afins', 'C', '31', 3.4, null],
  ['339', 'Miscellaneous Manufacturing', 'Outras indústrias transformadoras', 'C', '32', 2.5, null],
  ['42', 'Wholesale Trade', 'Comércio por grosso', 'G', '46', 2.3, 3.5],
  ['423', 'Merchant Wholesalers, Durable Goods', 'Comércio por grosso de bens duradouros', 'G', '46', null, null],
  ['424', 'Merchant Wholesalers, Nondurable Goods', 'Comércio por grosso de bens não duradouros', 'G', '46', null, null],
  ['425', 'Wholesale Trade Agents and Brokers', 'Agentes e intermediários do comércio por grosso', 'G', '46', 2.6, null],
  ['44', 'Retail Trade', 'Comércio a retalho', 'G', '47', 3.1, 4.4],
  ['45', 'Retail Trade', 'Comércio a retalho', 'G', '47', 3.1, 4.4],
  ['441', 'Motor Vehicle and Parts Dealers', 'Comércio de veículos automóveis, peças e acessórios', 'G', '45', 2.7, null],
  ['444', 'Building Material and Garden Equipment and Supplies Dealers', 'Comércio a retalho de materiais de construção e de artigos de jardinagem', 'G', '47', 2.9, null],
  ['445', 'Food and Beverage Retailers', 'Comércio a retalho de produtos alimentares e bebidas', 'G', '47', 2.8, null],
  ['449', 'Furniture, Home Furnishings, Electronics, and Appliance Retailers', 'Comércio a retalho de mobiliário, artigos para o lar, eletrónica e eletrodomésticos', 'G', '47', 3.4, null],
  ['455', 'General Merchandise Retailers', 'Comércio a retalho em estabelecimentos não especializados', 'G', '47', 2.2, null],
  ['456', 'Health and Personal Care Retailers', 'Comércio a retalho de produtos de saúde e de higiene pessoal', 'G', '47', 1.4, null],
  ['457', 'Gasoline Stations and Fuel Dealers', 'Postos de abastecimento e comércio a retalho de combustíveis', 'G', '47', 2.0, null],
  ['458', 'Clothing, Clothing Accessories, Shoe, and Jewelry Retailers', 'Comércio a retalho de vestuário, acessórios, calçado e joalharia', 'G', '47', 3.9, null],
  ['459', 'Sporting Goods, Hobby, Musical Instrument, Book, and Miscellaneous Retailers', 'Comércio a retalho de artigos de desporto e de lazer, instrumentos musicais, livros e outros', 'G', '47', 3.5, null],
  ['48', 'Transportation and Warehousing', 'Transportes e armazenagem', 'H', '49', 2.9, 4.0],
  ['49', 'Transportation and Warehousing', 'Transportes e armazenagem', 'H', '52', 2.9, 4.0],
  ['481', 'Air Transportation', 'Transportes aéreos', 'H', '51', 2.0, null],
  ['482', 'Rail Transportation', 'Transporte ferroviário', 'H', '49', 1.0, null],
  ['483', 'Water Transportation', 'Transportes por água', 'H', '50', 2.2, null],
  ['484', 'Truck Transportation', 'Transporte rodoviário de mercadorias', 'H', '49', 3.4, null],
  ['485', 'Transit and Ground Passenger Transportation', 'Transportes urbanos e outros transportes terrestres de passageiros', 'H', '49', 2.6, null],
  ['488', 'Support Activities for Transportation', 'Atividades auxiliares dos transportes', 'H', '52', 2.4, null],
  ['492', 'Couriers and Messengers', 'Atividades postais e de courier', 'H', '53', 2.8, null],
  ['493', 'Warehousing and Storage', 'Armazenagem', 'H', '52', 2.1, null],
  ['51', 'Information', 'Informação', 'J', '58', 2.0, 2.6],
  ['512', 'Motion Picture and Sound Recording Industries', 'Atividades cinematográficas, de vídeo e de gravação de som', 'J', '59', 3.0, null],
  ['513', 'Publishing Industries', 'Atividades de edição', 'J', '58', 2.2, null],
  ['516', 'Broadcasting and Content Providers', 'Rádio, televisão e fornecedores de conteúdos', 'J', '60', 2.1, null],
  ['517', 'Telecommunications', 'Telecomunicações', 'J', '61', 1.1, null],
  ['518', 'Computing Infrastructure Providers, Data Processing, Web Hosting', 'Infraestruturas informáticas, processamento de dados e alojamento web', 'J', '63', 1.6, null],
  ['519', 'Web Search Portals, Libraries, Archives, and Other Information Services', 'Portais de pesquisa na web, bibliotecas, arquivos e outros serviços de informação', 'J', '63', 1.9, null],
  ['52', 'Finance and Insurance', 'Atividades financeiras e de seguros', 'K', '64', 1.2, 1.8],
  ['521', 'Monetary Authorities - Central Bank', 'Autoridades monetárias (banco central)', 'K', '64', 0.1, null],
  ['522', 'Credit Intermediation and Related Activities', 'Intermediação de crédito e atividades relacionadas', 'K', '64', 1.3, null],
  ['523', 'Securities, Commodity Contracts, and Other Financial Investments', 'Valores mobiliários, contratos de mercadorias e outros investimentos financeiros', 'K', '66', 1.4, null],
  ['524', 'Insurance Carriers and Related Activities', 'Seguradoras e atividades relacionadas', 'K', '65', 0.8, null],
  ['525', 'Funds, Trusts, and Other Financial Vehicles', 'Fundos, trusts e outros veículos financeiros', 'K', '64', 1.0, null],
  ['53', 'Real Estate and Rental and Leasing', 'Atividades imobiliárias, aluguer e locação', 'L', '68', 2.7, 4.6],
  ['531', 'Real Estate', 'Atividades imobiliárias', 'L', '68', null, null],
  ['532', 'Rental and Leasing Services', 'Serviços de aluguer e locação', 'N', '77', 2.5, null],
  ['533', 'Lessors of Nonfinancial Intangible Assets', 'Locação de ativos intangíveis não financeiros', 'N', '77', 1.5, null],
  ['54', 'Professional, Scientific, and Technical Services', 'Serviços profissionais, científicos e técnicos', 'M', '69', 1.8, 2.5],
  ['541', 'Professional, Scientific, and Technical Services', 'Serviços profissionais, científicos e técnicos', 'M', '69', null, null],
  ['5411', 'Legal Services', 'Atividades jurídicas', 'M', '69', 1.2, null],
  ['5412', 'Accounting, Tax Preparation, Bookkeeping, and Payroll Services', 'Contabilidade, consultoria fiscal e processamento de salários', 'M', '69', 1.1, null],
  ['5413', 'Architectural, Engineering, and Related Services', 'Atividades de arquitetura, de engenharia e técnicas afins', 'M', '71', 2.3, null],
  ['5415', 'Computer Systems Design and Related Services', 'Consultoria e programação informática e atividades relacionadas', 'J', '62', 1.6, null],
  ['5416', 'Management, Scientific, and Technical Consulting Services', 'Consultoria de gestão, científica e técnica', 'M', '70', 1.9, null],
  ['5417', 'Scientific Research and Development Services', 'Investigação científica e desenvolvimento', 'M', '72', 1.4, null],
  ['5418', 'Advertising, Public Relations, and Related Services', 'Publicidade, relações públicas e atividades relacionadas', 'M', '73', 2.6, null],
  ['55', 'Management of Companies and Enterprises', 'Gestão de sociedades e empresas', 'M', '70', 1.3, 1.9],
  ['551', 'Management of Companies and Enterprises', 'Gestão de sociedades e empresas', 'M', '70', null, null],
  ['56', 'Administrative and Support and Waste Management and Remediation Services', 'Serviços administrativos e de apoio, gestão de resíduos e despoluição', 'N', '82', 3.0, 4.3],
  ['561', 'Administrative and Support Services', 'Serviços administrativos e de apoio', 'N', '82', null, null],
  ['5613', 'Employment Services', 'Atividades de emprego', 'N', '78', 3.3, null],
  ['5615', 'Travel Arrangement and Reservation Services', 'Agências de viagem, operadores turísticos e serviços de reservas', 'N', '79', 3.2, null],
  ['5617', 'Services to Buildings and Dwellings', 'Serviços a edifícios e habitações', 'N', '81', 3.1, null],
  ['562', 'Waste Management and Remediation Services', 'Gestão de resíduos e despoluição', 'E', '38', 1.6, null],
  ['61', 'Educational Services', 'Educação', 'P', '85', 1.9, 2.4],
  ['611', 'Educational Services', 'Educação', 'P', '85', null, null],
  ['62', 'Health Care and Social Assistance', 'Saúde e apoio social', 'Q', '86', 1.3, 1.9],
  ['621', 'Ambulatory Health Care Services', 'Cuidados de saúde em ambulatório', 'Q', '86', 1.2, null],
  ['622', 'Hospitals', 'Hospitais', 'Q', '86', 0.8, null],
  ['623', 'Nursing and Residential Care Facilities', 'Cuidados de enfermagem e estruturas residenciais', 'Q', '87', 1.5, null],
  ['624', 'Social Assistance', 'Apoio social', 'Q', '88', 1.6, null],
  ['71', 'Arts, Entertainment, and Recreation', 'Artes, espetáculos e atividades recreativas', 'R', '90', 3.4, 4.8],
  ['711', 'Performing Arts, Spectator Sports, and Related Industries', 'Artes do espetáculo, espetáculos desportivos e atividades relacionadas', 'R', '90', 3.6, null],
  ['712', 'Museums, Historical Sites, and Similar Institutions', 'Museus, sítios históricos e instituições similares', 'R', '91', 1.5, null],
  ['713', 'Amusement, Gambling, and Recreation Industries', 'Atividades de diversão, de jogo e recreativas', 'R', '93', 3.3, null],
  ['72', 'Accommodation and Food Services', 'Alojamento e restauração', 'I', '56', 4.6, 6.9],
  ['721', 'Accommodation', 'Alojamento', 'I', '55', 3.2, null],
  ['722', 'Food Services and Drinking Places', 'Restaurantes e estabelecimentos de bebidas', 'I', '56', 5.4, null],
  ['81', 'Other Services (except Public Administration)', 'Outros serviços (exceto administração pública)', 'S', '96', 3.2, 4.5],
  ['811', 'Repair and Maintenance', 'Reparação e manutenção', 'S', '95', 3.0, null],
  ['812', 'Personal and Laundry Services', 'Serviços pessoais e de lavandaria', 'S', '96', 3.4, null],
  ['813', 'Religious, Grantmaking, Civic, Professional, and Similar Organizations', 'Organizações religiosas, filantrópicas, cívicas, profissionais e similares', 'S', '94', 1.4, null],
  ['814', 'Private Households', 'Famílias empregadoras de pessoal doméstico', 'T', '97', 2.0, null],
  ['92', 'Public Administration', 'Administração pública', 'O', '84', 0.3, 0.9],
  ['921', 'Executive, Legislative, and Other General Government Support', 'Órgãos executivos e legislativos e outros serviços gerais da administração pública', 'O', '84', null, null],
  ['922', 'Justice, Public Order, and Safety Activities', 'Justiça, ordem pública e segurança', 'O', '84', null, null],
  ['923', 'Administration of Human Resource Programs', 'Administração de programas sociais, de educação e de saúde', 'O', '84', null, null],
  ['924', 'Administration of Environmental Quality Programs', 'Administração de programas de qualidade ambiental', 'O', '84', null, null],
  ['925', 'Administration of Housing Programs, Urban Planning, and Community Development', 'Administração de programas de habitação, urbanismo e desenvolvimento comunitário', 'O', '84', null, null],
  ['926', 'Administration of Economic Programs', 'Administração de programas económicos', 'O', '84', null, null],
  ['928', 'National Security and International Affairs', 'Defesa nacional e negócios estrangeiros', 'O', '84', null, null],
];

/** The 2-digit sector a NAICS code belongs to (31–33, 44–45 and 48–49 are single sectors split over codes). */
const sectorOf = (code: string) => code.slice(0, 2);

export const SECTOR_TABLE: ReadonlyMap<string, SectorRow> = (() => {
  const byCode = new Map<string, SectorRow>();
  for (const [naics, title, title_pt, section, division, dr, or] of RAW) {
    // a subsector without its own rate inherits its nearest listed ancestor's
    let parent: SectorRow | undefined;
    for (let len = naics.length - 1; len >= 2 && !parent; len--) parent = byCode.get(naics.slice(0, len));
    if (!parent && naics.length > 2) parent = byCode.get(sectorOf(naics));
    const default_rate_pct = dr ?? parent?.default_rate_pct;
    const overdue_rate_pct = or ?? parent?.overdue_rate_pct;
    if (default_rate_pct === undefined || overdue_rate_pct === undefined) throw new Error(`sector table: ${naics} has no rate and no parent`);
    naceSectionTitle(section, 'en'); // every row's section is named
    byCode.set(naics, { naics, title, title_pt, nace: { section, division }, default_rate_pct, overdue_rate_pct });
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
