import type { ComponentChildren } from 'preact';

/** A select of roles, named for screen readers by `label`; `children` go before the roles (a placeholder option). */
export function RoleSelect<R extends string>({ label, value, roles, onChange, children }: { label: string; value: R | ''; roles: readonly R[]; onChange: (role: R) => void; children?: ComponentChildren }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value as R)}>
      {children}
      {roles.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}
