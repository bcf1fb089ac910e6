/**
 * The sandbox company registry: the scoring fixtures (fixed records, consistent with their
 * profiles) — the demo ERP books add the companies a tenant synced (service.ts). Synthetic data.
 */
export interface RegistryRecord {
  name: string;
  legal_form: string | null;
  address: string | null;
  cae: string | null;
  nace: { section: string; division: string | null } | null;
  status: 'active' | 'ceased' | 'insolvent';
  incorporation_date: string | null;
  source: string;
  as_of: string;
}

const FIXTURE = (name: string, address: string, cae: string, section: string, division: string, status: RegistryRecord['status'], incorporated: string) => ({
  name,
  address,
  cae,
  nace: { section, division },
  status,
  incorporation_date: incorporated,
});

/** Registry records of the sandbox fixtures (GET /v1/sandbox/fixtures); sectors and ages as in their scoring profiles. */
export const SANDBOX_REGISTRY: Record<string, ReturnType<typeof FIXTURE>> = {
  '599000015': FIXTURE('Sandbox Alfa, Lda.', 'Rua do Comércio 12, 4000-101 Porto', '46900', 'G', '46', 'active', '1998-03-02'),
  '599000023': FIXTURE('Sandbox Beta, S.A.', 'Zona Industrial de Aveiro, Lote 7, 3800-055 Aveiro', '25110', 'C', '25', 'active', '2011-06-15'),
  '599000031': FIXTURE('Sandbox Gama, Lda.', 'Avenida da Liberdade 200, 3º, 1250-147 Lisboa', '41200', 'F', '41', 'active', '2017-01-20'),
  '599000040': FIXTURE('Sandbox Delta, Lda.', 'Largo do Rossio 3, 7000-529 Évora', '55111', 'I', '55', 'active', '2014-09-01'),
  '599000058': FIXTURE('Sandbox Epsilon, Unipessoal Lda.', 'Rua Direita 45, 8000-203 Faro', '43210', 'F', '43', 'active', '2020-05-11'),
  '599000082': FIXTURE('Sandbox Zeta, Lda.', 'Rua de Santa Catarina 310, 4000-443 Porto', '47190', 'G', '47', 'active', '2012-02-28'),
  '599000090': FIXTURE('Sandbox Eta, Lda.', 'Rua Ferreira Borges 88, 3000-180 Coimbra', '70220', 'M', '70', 'active', '2022-10-03'),
  '599000104': FIXTURE('Sandbox Teta, Lda.', 'Avenida Central 5, 4710-229 Braga', '82110', 'N', '82', 'active', '2024-04-16'),
  '599000112': FIXTURE('Sandbox Iota, Lda.', 'Estrada Nacional 1, km 120, 2400-441 Leiria', '25620', 'C', '25', 'insolvent', '2008-07-07'),
};

/** the fixture the sandbox tax authority does not recognise (scoring: 422 invalid_nif) */
export const UNRECOGNISED_FIXTURE = '599000066';
export const REGISTRY_AS_OF = '2026-11-01';
