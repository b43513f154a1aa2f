/**
 * Who a connection belongs to is kept in its tags, under the keys Nango uses since it moved
 * from end-user records to tags: a connect session's `end_user` and `organization` become these
 * tags of the connection its flow creates, and `GET /connections?endUserId=` /
 * `endUserOrganizationId=` filter by them.
 */
export const END_USER_TAGS = {
  id: 'end_user_id',
  email: 'end_user_email',
  displayName: 'end_user_display_name',
  organizationId: 'organization_id',
  organizationDisplayName: 'organization_display_name',
} as const;

interface EndUserInput {
  id: string;
  email?: string | undefined;
  display_name?: string | undefined;
}

interface OrganizationInput {
  id: string;
  display_name?: string | undefined;
}

/** The tags a session's end user and organization stand for (only the fields given). */
export function endUserTags(endUser: EndUserInput | undefined, organization: OrganizationInput | undefined): Record<string, string> {
  const tags: Record<string, string> = {};
  const put = (key: string, value: string | undefined) => {
    if (value !== undefined) tags[key] = value;
  };
  put(END_USER_TAGS.id, endUser?.id);
  put(END_USER_TAGS.email, endUser?.email);
  put(END_USER_TAGS.displayName, endUser?.display_name);
  put(END_USER_TAGS.organizationId, organization?.id);
  put(END_USER_TAGS.organizationDisplayName, organization?.display_name);
  return tags;
}

/** The list's `end_user`, as Nango lists it, read back from the tags; null without `end_user_id`. */
export function endUserOf(tags: Record<string, string>): {
  id: string;
  email: string | null;
  display_name: string | null;
  organization: { id: string; display_name: string | null } | null;
} | null {
  const id = tags[END_USER_TAGS.id];
  if (id === undefined) return null;
  const organizationId = tags[END_USER_TAGS.organizationId];
  return {
    id,
    email: tags[END_USER_TAGS.email] ?? null,
    display_name: tags[END_USER_TAGS.displayName] ?? null,
    organization: organizationId === undefined ? null : { id: organizationId, display_name: tags[END_USER_TAGS.organizationDisplayName] ?? null },
  };
}
