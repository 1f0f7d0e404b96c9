import { useQuery } from '@tanstack/react-query';
import { api, expectData } from '../api';
import { ErrorMessage, Loading } from './states';

/** Checkboxes over the permission catalog (`GET /admin/permission-catalog`), less the codes in `hidden`. */
export function PermissionChecks({
  chosen,
  onChange,
  hidden = [],
  legend,
}: {
  chosen: string[];
  onChange: (codes: string[]) => void;
  hidden?: string[];
  legend: string;
}) {
  const catalog = useQuery({ queryKey: ['permission-catalog'], queryFn: () => expectData(api.GET('/admin/permission-catalog')), staleTime: Infinity });
  if (catalog.isPending) return <Loading what="the permissions" />;
  if (catalog.isError) return <ErrorMessage error={catalog.error} action="read the permissions" />;
  const offered = catalog.data.items.filter((p) => !hidden.includes(p.code));
  if (offered.length === 0) return null;
  return (
    <fieldset className="checks">
      <legend>{legend}</legend>
      {offered.map((permission) => (
        <label key={permission.code} title={permission.description}>
          <input
            type="checkbox"
            checked={chosen.includes(permission.code)}
            onChange={(e) => onChange(e.target.checked ? [...chosen, permission.code] : chosen.filter((c) => c !== permission.code))}
          />
          {permission.code}
        </label>
      ))}
    </fieldset>
  );
}
