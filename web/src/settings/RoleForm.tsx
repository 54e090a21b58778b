import { useEffect, useState } from 'preact/hooks';
import { RoleSelect } from './RoleSelect.tsx';

interface Props<R extends string> {
  /** The select's accessible name, e.g. "Project role of ada@example.com". */
  label: string;
  /** null: no role of this kind yet (the select asks for one). */
  current: R | null;
  roles: readonly R[];
  /** Reports its own errors. */
  onSave: (role: R) => Promise<void>;
}

/** A role picker: its Save button appears once another role is chosen, and sends it. */
export function RoleForm<R extends string>({ label, current, roles, onSave }: Props<R>) {
  const [role, setRole] = useState<R | ''>(current ?? '');
  const [busy, setBusy] = useState(false);
  useEffect(() => setRole(current ?? ''), [current]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!role) return;
    setBusy(true);
    try {
      await onSave(role);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="role-form" onSubmit={(e) => void submit(e)}>
      <RoleSelect label={label} value={role} roles={roles} onChange={setRole}>
        {current === null && (
          <option value="" disabled>
            none
          </option>
        )}
      </RoleSelect>
      {role && role !== current && (
        <button type="submit" disabled={busy} aria-label={`Save: ${label} becomes ${role}`}>
          Save
        </button>
      )}
    </form>
  );
}
