export interface ProjectRecord {
  id: string;
  org_id: string;
  name: string;
  description: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
